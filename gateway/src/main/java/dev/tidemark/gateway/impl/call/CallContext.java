package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.gateway.ExtensionContext;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
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
  private final InputRequests inputs;
  private final TaskRunner tasks;

  public CallContext(Call call, ServerRequests serverRequests, RequestStates states, Function<String, Future<Void>> resourceUpdated) {
    this(call, serverRequests, states, resourceUpdated, null);
  }

  /** @param tasks where a tool that goes on as a task runs; null where nothing may (a prompt) */
  public CallContext(Call call, ServerRequests serverRequests, RequestStates states, Function<String, Future<Void>> resourceUpdated,
      TaskRunner tasks) {
    this.call = call;
    this.serverRequests = serverRequests;
    this.resourceUpdated = resourceUpdated;
    this.inputs = call.modern() ? new InputRequests(call, states) : null;
    this.tasks = tasks;
  }

  @Override
  public void log(String level, Object data) {
    if (LogLevels.passes(level, call.logLevel())) {
      call.channel().send(new JsonObject().put("jsonrpc", "2.0").put("method", McpMethods.NOTIFICATION_MESSAGE)
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
    call.channel().send(new JsonObject().put("jsonrpc", "2.0").put("method", McpMethods.NOTIFICATION_PROGRESS).put("params", params));
  }

  @Override
  public Future<JsonObject> request(String method, JsonObject params) {
    return request(call.modern() ? inputs.nextKey() : null, method, params);
  }

  @Override
  public Future<JsonObject> request(String key, String method, JsonObject params) {
    if (call.modern()) {
      return inputs.request(key, method, params); // 2026-07-28: no server requests; asked in the result
    }
    String capability = McpMethods.capability(method);
    if (!call.clientCan(capability)) {
      return Future.failedFuture(new IllegalStateException("the client did not declare the " + capability + " capability"));
    }
    return serverRequests.send(call.channel(), method, params, ServerRequests.CLIENT_REQUEST_TIMEOUT_MS);
  }

  @Override
  public boolean clientSupports(String capability) {
    return call.clientCan(capability);
  }

  @Override
  public boolean resumed() {
    return inputs != null && inputs.resumed();
  }

  /** The result that asks the client for everything {@link #request} was asked for, with the signed state of this round. */
  public JsonObject inputRequired() {
    return inputs.result();
  }

  @Override
  public Future<Void> resourceUpdated(String uri) {
    return resourceUpdated.apply(uri);
  }

  @Override
  public boolean clientSupportsTasks() {
    return tasks != null && McpMethods.TOOLS_CALL.equals(call.method()) && tasks.declaredBy(call);
  }

  @Override
  public Future<JsonObject> asTask(Function<ExtensionContext, Future<JsonObject>> work) {
    if (!clientSupportsTasks()) {
      return work.apply(this);
    }
    return tasks.runExtension(call, (String) call.params().getValue("name"), resourceUpdated, work);
  }

  @Override
  public void onCancel(Runnable action) {
    call.cancellation().onCancel(action);
  }
}
