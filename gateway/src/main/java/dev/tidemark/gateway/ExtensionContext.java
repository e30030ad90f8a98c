package dev.tidemark.gateway;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

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

  /** Tells every subscriber of {@code uri}, on any gateway, that it changed. */
  Future<Void> resourceUpdated(String uri);
}
