package dev.tidemark.gateway;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/** What an extension's tool may do while it runs: talk to the client on the call's own stream. */
public interface ExtensionContext {

  /** Sends {@code notifications/message} when the client's log level lets it through. */
  void log(String level, Object data);

  /** Sends {@code notifications/progress} when the client asked for progress; values must increase. */
  void progress(double progress, Double total, String message);

  /**
   * Sends a request to the client (sampling, elicitation) on the call's stream and completes with
   * the client's result. Fails when the client did not declare the capability or cannot be reached.
   */
  Future<JsonObject> request(String method, JsonObject params);

  /**
   * Like {@link #request(String, JsonObject)}, with the key that names the request among the
   * {@code inputRequests} of a 2026-07-28 {@code input_required} result (and in the client's
   * {@code inputResponses}); the 2025-11-25 era sends it as a server request and ignores the key.
   * On 2026-07-28, a client without the capability fails the whole request with -32021.
   */
  Future<JsonObject> request(String key, String method, JsonObject params);

  /** Whether the client declared {@code capability} (sampling, elicitation, roots) for this request. */
  boolean clientSupports(String capability);

  /** Whether this 2026-07-28 request came back with a {@code requestState} the gateway issued and verified. */
  boolean resumed();

  /** Tells every subscriber of {@code uri}, on any gateway, that it changed. */
  Future<Void> resourceUpdated(String uri);

  /** Whether the request declared the {@code io.modelcontextprotocol/tasks} extension, so that its tool may answer with a task. */
  default boolean clientSupportsTasks() {
    return false;
  }

  /**
   * Goes on as a task of the {@code io.modelcontextprotocol/tasks} extension when the request
   * declared it: the call answers at once with the task, and {@code work} runs on with a context
   * whose questions wait in the task's {@code inputRequests} until the client answers them with
   * {@code tasks/update}; what it completes with is the task's result, and a failure a failed task.
   * Without the extension, {@code work} runs with this context and the call answers with its result.
   */
  default Future<JsonObject> asTask(Function<ExtensionContext, Future<JsonObject>> work) {
    return work.apply(this);
  }

  /** Runs {@code action} when the call, or the task it became, is cancelled: the work should stop. */
  default void onCancel(Runnable action) {
  }
}
