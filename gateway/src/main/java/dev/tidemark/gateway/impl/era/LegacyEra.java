package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.http.Answer;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.http.RequestGuards;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import dev.tidemark.gateway.impl.method.ServerInfo;
import dev.tidemark.gateway.impl.session.SessionStore;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import dev.tidemark.gateway.impl.spec.McpVersions;
import dev.tidemark.gateway.impl.call.Channels;
import dev.tidemark.gateway.impl.call.ResponseChannel;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.function.Function;

/**
 * The 2025-11-25 era (and the older revisions clients still send): {@code initialize} opens a
 * session in cluster storage, and every later request names it; a call's stream may carry
 * server requests, progress and log messages before its response.
 */
public final class LegacyEra {

  /** What a session keeps of a client's description (clientInfo and capabilities), at most. */
  public static final int MAX_CLIENT_DESCRIPTION_BYTES = 16 * 1024;

  private final Vertx vertx;
  private final SessionStore sessions;
  private final ServerInfo info;
  private final Function<Object, Eras.Voice> voices;

  /** @param voices what each tool, by the name a tools/call gives, may send before its result */
  public LegacyEra(Vertx vertx, SessionStore sessions, ServerInfo info, Function<Object, Eras.Voice> voices) {
    this.vertx = vertx;
    this.sessions = sessions;
    this.info = info;
    this.voices = voices;
  }

  public Future<Turn> turn(MultiMap headers, Authenticated who, Envelope env, Channels channels) {
    Object id = env.id();
    String name = env.method();
    String version = headers.get(McpHeaders.VERSION);
    if (!McpMethods.INITIALIZE.equals(name) && version != null && !McpVersions.SUPPORTED.contains(version)) {
      return Refusal.rpc(400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST,
          "Unsupported MCP-Protocol-Version; supported: " + String.join(", ", McpVersions.ALL) + ".")).future();
    }
    if (McpMethods.INITIALIZE.equals(name)) {
      return env.hasId() ? initialize(id, env.params(), who)
          : Refusal.rpc(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "initialize is a request: give it an id.")).future();
    }
    String sessionId = headers.get(McpHeaders.SESSION);
    if (sessionId == null) {
      return Refusal.rpc(400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "Send the Mcp-Session-Id header that initialize returned.")).future();
    }
    return sessions.find(sessionId, who.caller().id(), who.database())
        .recover(err -> Refusal.rpc(503, JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, SessionLifecycle.STORAGE_UNAVAILABLE)).future())
        .compose(session -> {
          if (session == null) {
            return Refusal.rpc(404, JsonRpc.error(id, SessionLifecycle.SESSION_NOT_FOUND,
                "Session not found: it ended or expired. Initialize a new session.")).future();
          }
          if (!env.hasId()) {
            notified(sessionId, name, env.params());
            return Future.succeededFuture(new Turn.Answered(Answer.accepted())); // notifications need no answer
          }
          return Future.succeededFuture(new Turn.Run(call(headers, who, env, sessionId, session, channels, voices)));
        });
  }

  private void notified(String sessionId, String name, JsonObject params) {
    if (McpMethods.NOTIFICATION_CANCELLED.equals(name) && params.getValue("requestId") != null) {
      // the call may run on any gateway: each looks for it among its own
      String key = sessionId + "|" + Json.encode(params.getValue("requestId"));
      vertx.eventBus().publish(Addresses.GATEWAY_CANCEL_V1, new JsonObject().put("key", key));
    }
  }

  /**
   * Only a tools/call that may send something before its result streams: a call that will only
   * answer is one JSON body even when the client accepts a stream, so it stores no events and
   * parallel calls of a session share nothing.
   */
  static Call call(MultiMap headers, Authenticated who, Envelope env, String sessionId, JsonObject session, Channels channels,
      Function<Object, Eras.Voice> voices) {
    // "_meta": null is allowed (the envelope checked that any other value is an object)
    Object progressToken = env.meta().getValue("progressToken");
    boolean stream = McpMethods.TOOLS_CALL.equals(env.method()) && RequestGuards.accepts(headers.get(HttpHeaders.ACCEPT), "text/event-stream")
        && Eras.mayPrecedeResponse(progressToken, session.getString("log_level"), session.getJsonObject("client_capabilities"),
            voices.apply(env.params().getValue("name")));
    ResponseChannel channel = stream ? channels.sse(sessionId) : channels.json();
    return new Call(false, who.caller(), who.database(), sessionId, session, env.id(), env.method(), env.params(), channel,
        session.getString("protocol_version"), session.getJsonObject("client_capabilities"),
        session.getString("log_level"), progressToken, null, new Cancellation(), who.atNanos(), TraceParents.of(headers, env.meta()),
        who.toolset());
  }

  private Future<Turn> initialize(Object id, JsonObject params, Authenticated who) {
    Object requested = params.getValue("protocolVersion");
    String negotiated = McpVersions.negotiate(requested instanceof String r ? r : null);
    Object clientInfo = params.getValue("clientInfo");
    Object capabilities = params.getValue("capabilities");
    if (Json.encode(clientInfo).length() + Json.encode(capabilities).length() > MAX_CLIENT_DESCRIPTION_BYTES) {
      // the session keeps both for its lifetime: a client may not make it hold more
      return Refusal.rpc(200, JsonRpc.error(id, JsonRpc.INVALID_PARAMS,
          "clientInfo and capabilities may take at most " + MAX_CLIENT_DESCRIPTION_BYTES + " bytes together.")).future();
    }
    return sessions.create(who.caller(), who.database(), negotiated, clientInfo instanceof JsonObject ci ? ci : null,
            capabilities instanceof JsonObject c ? c : null)
        .recover(err -> Refusal.rpc(503, JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, SessionLifecycle.STORAGE_UNAVAILABLE)).future())
        .map(sessionId -> new Turn.Answered(new Answer(200, Map.of(McpHeaders.SESSION, sessionId), JsonRpc.result(id, new JsonObject()
            .put("protocolVersion", negotiated)
            .put("capabilities", info.capabilities())
            .put("serverInfo", info.serverInfo())
            .put("instructions", info.instructions(who.database()))))));
  }
}
