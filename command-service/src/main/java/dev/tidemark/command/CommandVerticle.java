package dev.tidemark.command;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.config.TidemarkConfig;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;

/**
 * The command role for one database. It holds the address change tools are routed to; the tools
 * themselves (plan, confirm, commit) are not served yet, so {@code tools/list} shows none of them.
 */
public final class CommandVerticle extends VerticleBase {

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private MessageConsumer<JsonObject> consumer;

  public CommandVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    consumer = vertx.eventBus().consumer(Addresses.command(config.database().name()), this::onMessage);
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
    } else if (Actions.TOOL_CALL.equals(action)) {
      msg.reply(ToolReply.failed(new ToolException(ErrorCode.NOT_FOUND, "No change tool is served by this version.")).toJson());
    } else {
      msg.fail(400, "unknown action " + action);
    }
  }
}
