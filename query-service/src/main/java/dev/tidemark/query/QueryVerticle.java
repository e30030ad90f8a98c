package dev.tidemark.query;

import java.util.function.Supplier;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.query.impl.CatalogCache;
import dev.tidemark.query.impl.ParamTypeCache;
import dev.tidemark.query.impl.ToolMessages;
import dev.tidemark.query.impl.CursorCodec;
import dev.tidemark.query.impl.DescribeTableTool;
import dev.tidemark.query.impl.ExplainTool;
import dev.tidemark.query.impl.GetRowTool;
import dev.tidemark.query.impl.ListRowsTool;
import dev.tidemark.query.impl.ChangesSinceTool;
import dev.tidemark.query.impl.ListTablesTool;
import dev.tidemark.query.impl.QueryTool;
import dev.tidemark.query.impl.ReadTool;
import dev.tidemark.query.impl.StatusTool;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The query role for one database: runs every read tool, as the caller's PostgreSQL role. */
public final class QueryVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(QueryVerticle.class);

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private final Supplier<Pool> preparingPoolFactory;
  private Map<String, ReadTool> tools;
  private MessageConsumer<JsonObject> consumer;
  private MessageConsumer<JsonObject> cancels;
  private MessageConsumer<JsonObject> schemaChanges;

  private final StalenessCheck staleness;

  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this(node, config, pool, () -> pool, StalenessCheck.NEVER);
  }

  /**
   * @param pool connections that are reset after every read
   * @param preparingPool makes connections that keep statements prepared, for reads that leave
   *     nothing behind (see {@code ReadTool.readOnly}); called once this verticle runs, so that the
   *     connections live on its event loop and a statement costs no hand-off between threads
   * @param staleness decides when a page cursor is CURSOR_STALE; the changelog provides it
   */
  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool, Supplier<Pool> preparingPool,
      StalenessCheck staleness) {
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.preparingPoolFactory = preparingPool;
    this.staleness = staleness;
  }

  @Override
  public Future<?> start() {
    DatabaseConfig db = config.database();
    CursorCodec cursors = new CursorCodec(CursorCodec.secret(config.cursorSecret(),
        db.host() + ":" + db.port() + "/" + db.dbname() + "\u0000" + db.user() + "\u0000" + db.password()));
    Pool preparingPool = preparingPoolFactory.get();
    ParamTypeCache paramTypes = new ParamTypeCache(db.catalogCacheMs());
    CatalogCache catalog = new CatalogCache(pool, preparingPool, db.schemas(), db.catalogCacheMs(), db.statementTimeoutMs());
    tools = Map.of(
        ToolCatalog.STATUS, new StatusTool(vertx, node, config),
        ToolCatalog.LIST_TABLES, new ListTablesTool(db),
        ToolCatalog.DESCRIBE_TABLE, new DescribeTableTool(db),
        ToolCatalog.GET_ROW, new GetRowTool(catalog),
        ToolCatalog.LIST_ROWS, new ListRowsTool(catalog, cursors, staleness),
        ToolCatalog.QUERY, new QueryTool(db, paramTypes, cursors, staleness),
        ToolCatalog.EXPLAIN, new ExplainTool(db),
        ToolCatalog.CHANGES_SINCE, new ChangesSinceTool(db));
    consumer = vertx.eventBus().consumer(Addresses.query(config.database().name()), this::onMessage);
    cancels = vertx.eventBus().consumer(Addresses.cancel(config.database().name()),
        msg -> dev.tidemark.query.impl.RunningStatements.cancel(msg.body().getString("request_id", "")));
    // a gateway on this node hears every schema change from the changelog; elsewhere entries expire
    schemaChanges = vertx.eventBus().localConsumer(Addresses.schemaChanges(db.name()), msg -> {
      catalog.clear();
      paramTypes.clear();
    });
    return Future.all(consumer.completion(), cancels.completion());
  }

  @Override
  public Future<?> stop() {
    return consumer == null ? Future.succeededFuture() : Future.all(consumer.unregister(), cancels.unregister(), schemaChanges.unregister());
  }

  private void onMessage(Message<JsonObject> msg) {
    ToolMessages.answer(msg, node, pool, request -> {
      ReadTool tool = tools.get(request.tool());
      return tool == null
          ? Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no read tool named " + request.tool() + "."))
          : tool.run(pool, request);
    }, LOG);
  }
}
