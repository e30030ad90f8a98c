package dev.tidemark.query;

import dev.tidemark.database.CallerPools;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.Pools;
import dev.tidemark.database.RunningStatements;
import dev.tidemark.database.toolserver.ToolServer;
import dev.tidemark.database.toolserver.ServiceDrain;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolException;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.ParamTypeCache;
import dev.tidemark.query.impl.CursorCodec;
import dev.tidemark.query.impl.DescribeTableTool;
import dev.tidemark.query.impl.ExplainTool;
import dev.tidemark.query.impl.GetRowTool;
import dev.tidemark.query.impl.ListRowsTool;
import dev.tidemark.query.impl.ChangesSinceTool;
import dev.tidemark.query.impl.ChangelogWaits;
import dev.tidemark.query.impl.WatchTool;
import dev.tidemark.query.impl.ListTablesTool;
import dev.tidemark.query.impl.QueryTool;
import dev.tidemark.query.impl.StatusTool;
import dev.tidemark.telemetry.tracing.Traces;
import io.opentelemetry.api.trace.Tracer;
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
  private final StalenessCheck staleness;
  /** Tidemark's login on the database the changelog is stored in: {@link #pool} itself unless database.changelog-url is set. */
  private Pool store;
  private CallerPools callers;
  private Map<String, ReadTool> tools;
  private ReadTool named;
  private MessageConsumer<Object> consumer;
  private final ServiceDrain running = new ServiceDrain();
  private MessageConsumer<JsonObject> cancels;
  private MessageConsumer<JsonObject> schemaChanges;
  private Tracer tracer;
  private ChangelogWaits waits;

  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this(node, config, pool, StalenessCheck.NEVER);
  }

  /**
   * @param pool Tidemark's own login: the catalog, the changelog and the key ring. Callers'
   *     statements run on pools of their own role's login, made once this verticle runs, so that
   *     their connections live on its event loop and a statement costs no hand-off between threads
   * @param staleness decides when a page cursor is CURSOR_STALE; the changelog provides it
   */
  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool, StalenessCheck staleness) {
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.staleness = staleness;
  }

  @Override
  public Future<?> start() {
    DatabaseConfig db = config.database();
    tracer = Traces.tracer(vertx);
    store = Pools.changelog(vertx, db, pool);
    return KeyRingSource.start(vertx, pool, config.keysRefreshSeconds()).compose(keys -> {
      callers = new CallerPools(vertx, db, keys, CallerPools.Prepared.READS);
      CursorCodec cursors = new CursorCodec(keys::ring);
      ParamTypeCache paramTypes = new ParamTypeCache(db.catalogCacheMs());
      ParamTypeCache resultTypes = new ParamTypeCache(db.catalogCacheMs());
      FunctionGuard functions = new FunctionGuard(pool, db.reviewedFunctions(), db.catalogCacheMs());
      CatalogCache catalog = new CatalogCache(pool, db.schemas(), db.catalogCacheMs(), db.statementTimeoutMs(), functions);
      // the relay's notice of stored changes comes from the database the changelog is stored in
      DatabaseConfig changelog = db.changelogDatabase();
      waits = new ChangelogWaits(vertx, changelog.connectOptions(changelog.user(), changelog.password(), "tidemark-watch"));
      QueryTool queryTool = new QueryTool(db, paramTypes, resultTypes, functions, cursors, staleness);
      named = new dev.tidemark.query.impl.NamedReadTool(queryTool);
      tools = Map.of(
          ToolCatalog.STATUS, new StatusTool(vertx, node, config, pool, store),
          ToolCatalog.LIST_TABLES, new ListTablesTool(db, cursors),
          ToolCatalog.DESCRIBE_TABLE, new DescribeTableTool(db),
          ToolCatalog.GET_ROW, new GetRowTool(catalog),
          ToolCatalog.LIST_ROWS, new ListRowsTool(catalog, cursors, staleness),
          ToolCatalog.QUERY, queryTool,
          ToolCatalog.EXPLAIN, new ExplainTool(db, functions),
          ToolCatalog.CHANGES_SINCE, new ChangesSinceTool(db, pool, store),
          ToolCatalog.WATCH, new WatchTool(vertx, db, pool, store, catalog, cursors, waits, config.watch().maxWaitingPerCaller()));
      consumer = vertx.eventBus().consumer(Addresses.query(config.database().name()), this::onMessage);
      cancels = vertx.eventBus().consumer(Addresses.cancel(config.database().name()),
          msg -> {
            waits.cancel(msg.body().getString("request_id", ""));
            RunningStatements.cancel(msg.body().getString("request_id", ""));
          });
      // the node's fan-out (deployed with the query role) publishes every schema change from the changelog here
      schemaChanges = vertx.eventBus().localConsumer(Addresses.schemaChanges(db.name()), msg -> {
        catalog.clear();
        paramTypes.clear();
        resultTypes.clear();
        functions.clear();
      });
      return Future.all(consumer.completion(), cancels.completion());
    });
  }

  @Override
  public Future<?> stop() {
    Future<?> closed = callers == null ? Future.succeededFuture()
        : Future.join(callers.close(), waits.close(), Pools.closeChangelog(store, pool));
    return consumer == null ? closed
        : Future.all(consumer.unregister(), cancels.unregister(), schemaChanges.unregister()).compose(x -> closed);
  }

  /** Stops taking read requests and waits up to {@code timeoutMillis} for those running; see {@link ServiceDrain}. */
  public Future<Integer> drain(long timeoutMillis) {
    if (waits != null) {
      waits.endAll();  // a waiting watch answers checkpoint at once: its cursor continues on another node
    }
    return running.drain(context, consumer, timeoutMillis);
  }

  private void onMessage(Message<Object> msg) {
    running.track(ToolServer.answer(msg, node, pool, tracer, request -> {
      // a tool a team defined carries its definition: its name is never a built-in tool's
      ReadTool tool = request.named() != null ? named : tools.get(request.tool());
      return tool == null
          ? Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no read tool named " + request.tool() + "."))
          : tool.run(callers.forCaller(request.caller()), request);
    }, LOG));
  }
}
