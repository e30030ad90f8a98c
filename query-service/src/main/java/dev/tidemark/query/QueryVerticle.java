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
import dev.tidemark.query.impl.ChangesSinceTool;
import dev.tidemark.query.impl.ListTablesTool;
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

  public QueryVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    tools = Map.of(
        "status", new StatusTool(vertx, node, config),
        "list_tables", new ListTablesTool(config.database()),
        "changes_since", new ChangesSinceTool(config.database()));
    consumer = vertx.eventBus().consumer(Addresses.query(config.database().name()), this::onMessage);
    return consumer.completion();
  }

  @Override
  public Future<?> stop() {
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
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
