package dev.tidemark.query;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.config.TidemarkConfig.DatabaseConfig;
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
  private Map<String, ReadTool> tools;
  private MessageConsumer<JsonObject> consumer;
  private MessageConsumer<JsonObject> cancels;

  private final StalenessCheck staleness;

  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this(node, config, pool, StalenessCheck.NEVER);
  }

  /** {@code staleness} decides when a page cursor is CURSOR_STALE; the changelog provides it. */
  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool, StalenessCheck staleness) {
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.staleness = staleness;
  }

  @Override
  public Future<?> start() {
    DatabaseConfig db = config.database();
    CursorCodec cursors = new CursorCodec(CursorCodec.secret(config.cursorSecret(),
        db.host() + ":" + db.port() + "/" + db.dbname() + "\u0000" + db.user() + "\u0000" + db.password()));
    tools = Map.of(
        ToolCatalog.STATUS, new StatusTool(vertx, node, config),
        ToolCatalog.LIST_TABLES, new ListTablesTool(db),
        ToolCatalog.DESCRIBE_TABLE, new DescribeTableTool(db),
        ToolCatalog.GET_ROW, new GetRowTool(db),
        ToolCatalog.LIST_ROWS, new ListRowsTool(db, cursors, staleness),
        ToolCatalog.QUERY, new QueryTool(db, cursors, staleness),
        ToolCatalog.EXPLAIN, new ExplainTool(db),
        ToolCatalog.CHANGES_SINCE, new ChangesSinceTool(db));
    consumer = vertx.eventBus().consumer(Addresses.query(config.database().name()), this::onMessage);
    cancels = vertx.eventBus().consumer(Addresses.cancel(config.database().name()),
        msg -> dev.tidemark.query.impl.RunningStatements.cancel(msg.body().getString("request_id", "")));
    return Future.all(consumer.completion(), cancels.completion());
  }

  @Override
  public Future<?> stop() {
    return consumer == null ? Future.succeededFuture() : Future.all(consumer.unregister(), cancels.unregister());
  }

  private void onMessage(Message<JsonObject> msg) {
    String action = msg.headers().get(Addresses.ACTION_HEADER);
    if (Actions.HEALTH.equals(action)) {
      pool.query("SELECT 1").execute()
          .map(rows -> new ServiceHealth(node.nodeId(), true, null))
          .otherwise(err -> new ServiceHealth(node.nodeId(), false, "PostgreSQL: " + err.getMessage()))
          .onSuccess(h -> msg.reply(h.toJson()));
      return;
    }
    if (!Actions.TOOL_CALL.equals(action)) {
      msg.fail(400, "unknown action " + action);
      return;
    }
    ToolRequest request;
    try {
      request = ToolRequest.fromJson(msg.body());
    } catch (RuntimeException e) {
      msg.fail(400, "malformed tool request: " + e.getMessage());
      return;
    }
    ReadTool tool = tools.get(request.tool());
    Future<ToolReply> reply = tool == null
        ? Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no read tool named " + request.tool() + "."))
        : tool.run(pool, request);
    reply.recover(err -> Future.succeededFuture(ToolReply.failed(ReadTool.toToolException(err))))
        .onSuccess(r -> {
          if (r.isError() && ErrorCode.INTERNAL.code().equals(r.error().getString("code"))) {
            LOG.warn("tool {} failed for request {}", request.tool(), request.requestId());
          }
          msg.reply(r.toJson());
        });
  }
}
