package dev.tidemark.query;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * How the query and the command role answer their address: {@code health} by a round trip to
 * PostgreSQL, {@code tools/call} by running the tool; every failure becomes a tool error, so the
 * gateway always gets a {@link ToolReply}.
 */
public final class ToolMessages {

  private ToolMessages() {}

  /** Completes once the message is answered, so that a draining node knows what it still runs. */
  public static Future<Void> answer(Message<JsonObject> msg, NodeInfo node, Pool pool, Function<ToolRequest, Future<ToolReply>> run,
      Logger log) {
    String action = msg.headers().get(Addresses.ACTION_HEADER);
    if (Actions.HEALTH.equals(action)) {
      return pool.query("SELECT 1").execute()
          .map(rows -> new ServiceHealth(node.nodeId(), true, null))
          .otherwise(err -> new ServiceHealth(node.nodeId(), false, "PostgreSQL: " + err.getMessage()))
          .map(h -> {
            msg.reply(h.toJson());
            return null;
          });
    }
    if (!Actions.TOOL_CALL.equals(action)) {
      msg.fail(400, "unknown action " + action);
      return Future.succeededFuture();
    }
    ToolRequest request;
    try {
      request = ToolRequest.fromJson(msg.body());
    } catch (RuntimeException e) {
      msg.fail(400, "malformed tool request: " + e.getMessage());
      return Future.succeededFuture();
    }
    Future<ToolReply> reply;
    try {
      reply = run.apply(request);
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    return reply.recover(err -> Future.succeededFuture(ToolReply.failed(ReadTool.toToolException(err))))
        .map(r -> {
          if (r.isError() && ErrorCode.INTERNAL.code().equals(r.error().getString("code"))) {
            log.warn("tool {} failed for request {}", request.tool(), request.requestId());
          }
          msg.reply(r.toJson());
          return null;
        });
  }
}
