package dev.tidemark.gateway.impl.era;

import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.LogLevels;
import dev.tidemark.gateway.impl.http.Answer;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.http.RequestGuards;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.resource.SubscriptionHolders;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.session.EventLog;
import dev.tidemark.gateway.impl.session.SessionStore;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the 2025-11-25 era does with a session besides opening it: a GET names the session whose
 * stream it opens, logging/setLevel sets its log threshold, a DELETE ends it, and whatever ends a session (a DELETE, a revoked token) takes its
 * stream, replay store and subscriptions with it, on whichever gateway they are.
 */
public final class SessionLifecycle {

  private static final Logger LOG = LoggerFactory.getLogger(SessionLifecycle.class);

  /** JSON-RPC code of a 404 for an unknown or ended session. */
  public static final int SESSION_NOT_FOUND = -32001;
  static final String STORAGE_UNAVAILABLE = "Session storage is unavailable; retry shortly.";

  private final Vertx vertx;
  private final SessionStore sessions;
  private final EventLog events;
  private final Subscriptions subscriptions;
  private final SubscriptionHolders holders;

  public SessionLifecycle(Vertx vertx, SessionStore sessions, EventLog events, Subscriptions subscriptions, SubscriptionHolders holders) {
    this.vertx = vertx;
    this.sessions = sessions;
    this.events = events;
    this.subscriptions = subscriptions;
    this.holders = holders;
  }

  /** The id of the caller's session whose GET stream the request opens. */
  public Future<String> streamOf(MultiMap headers, Authenticated who) {
    String sessionId = headers.get(McpHeaders.SESSION);
    if (sessionId == null) {
      return Refusal.http(405, "GET opens the stream of a 2025-11-25 session: send its Mcp-Session-Id. The 2026-07-28 era uses subscriptions/listen.")
          .with(HttpHeaders.ALLOW.toString(), "POST").future();
    }
    if (!RequestGuards.accepts(headers.get(HttpHeaders.ACCEPT), "text/event-stream")) {
      return Refusal.http(406, "GET answers with an SSE stream: send Accept: text/event-stream.").future();
    }
    return sessions.find(sessionId, who.caller().id(), who.database())
        .recover(err -> Refusal.http(503, STORAGE_UNAVAILABLE).future())
        .compose(session -> session == null
            ? Refusal.rpc(404, JsonRpc.error(null, SESSION_NOT_FOUND, "Session not found: it ended or expired. Initialize a new session.")).future()
            : Future.succeededFuture(sessionId));
  }

  /** A DELETE: 200 once the session is gone. */
  public Future<Answer> delete(MultiMap headers, Authenticated who) {
    String sessionId = headers.get(McpHeaders.SESSION);
    if (sessionId == null) {
      return Refusal.rpc(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "Send the Mcp-Session-Id header of the session to end.")).future();
    }
    return end(sessionId, who.caller().id(), who.database())
        .recover(err -> Refusal.rpc(503, JsonRpc.error(null, JsonRpc.INTERNAL_ERROR, STORAGE_UNAVAILABLE)).future())
        .compose(deleted -> deleted ? Future.succeededFuture(new Answer(200, Map.of(), null))
            : Refusal.rpc(404, JsonRpc.error(null, SESSION_NOT_FOUND, "Session not found: it ended or expired.")).future());
  }

  /** Ends the caller's session; false when it had ended already or is not the caller's. */
  public Future<Boolean> end(String sessionId, String callerId, String database) {
    return sessions.delete(sessionId, callerId).onSuccess(deleted -> {
      if (deleted) {
        vertx.eventBus().publish(Addresses.session(sessionId), new JsonObject().put("takeover", "ended"));
        events.forget(sessionId);
        subscriptions.remove(database, Subscriptions.LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.LIST_CHANGED));
        subscriptions.remove(database, Subscriptions.TOOLS_LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.TOOLS_LIST_CHANGED));
        // its subscriptions end with it, and stop counting against its caller's limit
        holders.endSession(callerId, sessionId).compose(held -> subscriptions.removeAll(sessionId, held))
            .onFailure(err -> LOG.warn("the subscriptions of ended session {} could not all be removed: {}", sessionId, err.toString()));
      }
    });
  }

  /** {@code logging/setLevel}: the session's threshold for the log messages its calls send. */
  public Future<JsonObject> setLevel(Call call) {
    Object level = call.params().getValue("level");
    if (!(level instanceof String l) || !LogLevels.valid(l)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "level must be one of " + String.join(", ", LogLevels.ORDER) + "."));
    }
    return sessions.update(call.sessionId(), "log_level", l).map(new JsonObject());
  }
}
