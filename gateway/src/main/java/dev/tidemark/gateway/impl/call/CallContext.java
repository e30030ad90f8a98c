package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.ExtensionContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.function.Function;

/**
 * What a running call may do besides answer: log and report progress on its own stream, and ask
 * the client something, as a server request on 2025-11-25 or an {@code input_required} result on
 * 2026-07-28, whose retry brings the answers back under the same keys.
 */
public final class CallContext implements ExtensionContext {

  private final Call call;
  private final ServerRequests serverRequests;
  private final Function<String, Future<Void>> resourceUpdated;
  private final JsonObject pending = new JsonObject();
  private int requests;

  public CallContext(Call call, ServerRequests serverRequests, Function<String, Future<Void>> resourceUpdated) {
    this.call = call;
    this.serverRequests = serverRequests;
    this.resourceUpdated = resourceUpdated;
  }

  @Override
  public void log(String level, Object data) {
    if (LogLevels.passes(level, call.logLevel())) {
      call.channel().send(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/message")
          .put("params", new JsonObject().put("level", level).put("logger", "tidemark").put("data", data)));
    }
  }

  @Override
  public void progress(double progress, Double total, String message) {
    if (call.progressToken() == null) {
      return;
    }
    JsonObject params = new JsonObject().put("progressToken", call.progressToken()).put("progress", progress);
    if (total != null) {
      params.put("total", total);
    }
    if (message != null) {
      params.put("message", message);
    }
    call.channel().send(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/progress").put("params", params));
  }

  @Override
  public Future<JsonObject> request(String method, JsonObject params) {
    String capability = method.startsWith("sampling/") ? "sampling" : method.startsWith("elicitation/") ? "elicitation" : "roots";
    if (!call.clientCan(capability)) {
      return Future.failedFuture(new IllegalStateException("the client did not declare the " + capability + " capability"));
    }
    if (!call.modern()) {
      return serverRequests.send(call.channel(), method, params, ServerRequests.CLIENT_REQUEST_TIMEOUT_MS);
    }
    // 2026-07-28: no server requests; ask in the result and take the answer from the retry
    String key = "input-" + (requests++);
    JsonObject answer = call.inputResponses() == null ? null : call.inputResponses().getJsonObject(key);
    if (answer != null) {
      return Future.succeededFuture(answer);
    }
    pending.put(key, new JsonObject().put("method", method).put("params", params));
    return Future.failedFuture(new InputRequired());
  }

  /** The result that asks the client for everything {@link #request} was asked for. */
  public JsonObject inputRequired() {
    return inputRequired(pending, "tools/call:" + call.params().getString("name"));
  }

  /** An {@code input_required} result; {@code state} comes back with the retry, base64url-encoded so that any bytes survive. */
  public static JsonObject inputRequired(JsonObject inputRequests, String state) {
    return new JsonObject().put("resultType", "input_required").put("inputRequests", inputRequests)
        .put("requestState", Base64.getUrlEncoder().withoutPadding().encodeToString(state.getBytes(StandardCharsets.UTF_8)));
  }

  @Override
  public Future<Void> resourceUpdated(String uri) {
    return resourceUpdated.apply(uri);
  }
}
