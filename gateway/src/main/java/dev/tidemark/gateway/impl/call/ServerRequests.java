package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * Requests the server sends to a client in the middle of a call (sampling, elicitation) on the
 * 2025-11-25 era. The client's answer is a new POST that may reach any gateway; it travels over the
 * event bus to the call waiting for it, by the request id.
 */
public final class ServerRequests {

  /** Ids of server requests start with this, so that a posted response can be told apart. */
  public static final String ID_PREFIX = "tidemark-";
  /** How long a client may take to answer a server request (sampling, elicitation). */
  public static final long CLIENT_REQUEST_TIMEOUT_MS = 120_000;

  private final Vertx vertx;

  public ServerRequests(Vertx vertx) {
    this.vertx = vertx;
  }

  /** Completes with the client's {@code result}, or fails with its error or after {@code timeoutMs}. */
  public Future<JsonObject> send(ResponseChannel channel, String method, JsonObject params, long timeoutMs) {
    if (!channel.streaming()) {
      return Future.failedFuture(new IllegalStateException("the client did not accept a stream for this call"));
    }
    String id = ID_PREFIX + UUID.randomUUID();
    Promise<JsonObject> answer = Promise.promise();
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(Addresses.clientReply(id), msg -> {
      JsonObject body = msg.body();
      if (body.containsKey("error")) {
        answer.tryFail(new IllegalStateException("the client refused " + method + ": "
            + body.getJsonObject("error").getString("message", "")));
      } else {
        answer.tryComplete(body.getJsonObject("result", new JsonObject()));
      }
    });
    long timer = vertx.setTimer(timeoutMs, t -> {
      answer.tryFail(new IllegalStateException("the client did not answer " + method + " within " + timeoutMs + " ms"));
      channel.send(new JsonObject().put("jsonrpc", "2.0").put("method", McpMethods.NOTIFICATION_CANCELLED)
          .put("params", new JsonObject().put("requestId", id).put("reason", "timed out")));
    });
    return consumer.completion()
        .compose(v -> channel.send(new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", method).put("params", params)))
        .compose(v -> answer.future())
        .eventually(() -> {
          vertx.cancelTimer(timer);
          return consumer.unregister();
        });
  }

  /** Routes a response a client posted to the call that waits for it; false when it is not ours. */
  public boolean deliver(JsonObject response) {
    Object id = response.getValue("id");
    if (!(id instanceof String s) || !s.startsWith(ID_PREFIX)) {
      return false;
    }
    vertx.eventBus().send(Addresses.clientReply(s), response);
    return true;
  }
}
