package dev.tidemark.gateway.impl;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.gateway.McpExtension;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Streamable HTTP MCP endpoint, for both eras on one path. Requests are checked before the body
 * is read, in the order the contract gives: Origin and Host (403), content type (415), credentials
 * (401), body size (413); the body then has a deadline. The JSON-RPC message decides the era: a
 * request whose {@code _meta} names its protocol version is 2026-07-28 (stateless), anything else
 * is 2025-11-25 or older (sessions, GET stream, server requests).
 */
public final class McpEndpoint {

  private static final Logger LOG = LoggerFactory.getLogger(McpEndpoint.class);

  public static final String SESSION_HEADER = "Mcp-Session-Id";
  public static final String VERSION_HEADER = "MCP-Protocol-Version";
  public static final String METHOD_HEADER = "Mcp-Method";
  public static final String NAME_HEADER = "Mcp-Name";
  /** A failed credential check is answered no sooner than this, to slow down guessing. */
  public static final long FAILED_AUTH_DELAY_MILLIS = 250;
  /** JSON-RPC code of a 404 for an unknown or ended session. */
  public static final int SESSION_NOT_FOUND = -32001;
  /** JSON-RPC code of a 408 when the body did not arrive in time. */
  public static final int BODY_TIMEOUT = -32002;
  /** What a session keeps of a client's description (clientInfo and capabilities), at most. */
  public static final int MAX_CLIENT_DESCRIPTION_BYTES = 16 * 1024;
  /** Longest a refused connection is read (and what it sends dropped) before the server closes it. */
  public static final long LINGER_MILLIS = 1000;
  /** The challenge of every 401. */
  public static final String INVALID_TOKEN_CHALLENGE = "Bearer realm=\"tidemark\", error=\"invalid_token\"";
  /** What a request, stream or call of a caller whose token was revoked ends with. */
  static final String REVOKED_MESSAGE = "The bearer token was revoked; requests with it are refused.";
  /** Quiet SSE streams get a comment this often, so that intermediaries keep them open. */
  public static final long KEEP_ALIVE_MILLIS = 15_000;

  private static final Set<String> NAMED_METHODS = Set.of("tools/call", "resources/read", "prompts/get");
  /** The capabilities under which a 2025-11-25 call may send the client a request mid-call. */
  private static final List<String> SERVER_REQUEST_CAPABILITIES = List.of("elicitation", "sampling", "roots");
  private static final String CALLER = "tidemark.caller";
  private static final String DATABASE = "tidemark.database";
  private static final String AUTHENTICATED_AT = "tidemark.authenticated-at";

  /**
   * What this node holds for a caller beyond a plain request: how it ends when the node stops or
   * the call is cancelled, and how it ends when the caller's token is revoked.
   */
  private record Held(String callerId, Runnable stop, Runnable revoke) {}

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final SessionStore sessions;
  private final EventLog events;
  private final Subscriptions subscriptions;
  private final ServerRequests serverRequests;
  private final McpMethods methods;
  private final boolean loopbackOnly;
  private final ConnectionSlots slots;
  /** Calls running on this node, by session and request id, so that a cancellation or a revocation can find them. */
  private final Map<String, Held> inflight = new ConcurrentHashMap<>();
  /** Streams that stay open (GET streams, listen streams), closed gracefully when the node stops. */
  private final Map<String, Held> openStreams = new ConcurrentHashMap<>();
  private final Revocations revocations = new Revocations();
  private final ChangeNotifier notifier;
  private MessageConsumer<JsonObject> cancelConsumer;

  public McpEndpoint(Vertx vertx, NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions,
      ConnectionSlots slots) {
    this.slots = slots;
    this.vertx = vertx;
    this.config = config;
    this.authenticator = authenticator;
    this.sessions = new SessionStore(vertx, revocations);
    this.events = new EventLog(vertx);
    this.subscriptions = new Subscriptions(vertx, events);
    this.serverRequests = new ServerRequests(vertx);
    this.methods = new McpMethods(vertx, node, config, extensions, sessions, subscriptions, serverRequests);
    this.loopbackOnly = TidemarkConfig.isLoopback(config.http().host());
    this.notifier = new ChangeNotifier(vertx, config.database().name(), node.nodeId(), subscriptions);
  }

  /** The address a cancellation is published on, so that whichever gateway runs the call stops it. */
  public static final String CANCEL_ADDRESS = "tidemark.gateway.cancel.v1";

  public Future<Void> start(Router router) {
    GatewayMeters.watch(vertx, openStreams, inflight);
    String path = config.http().path();
    for (String p : List.of(path, path + "/:database")) {
      router.post(p).handler(this::post);
      router.get(p).handler(this::get);
      router.delete(p).handler(this::delete);
      router.route(p).handler(ctx -> ctx.response().setStatusCode(405).putHeader(HttpHeaders.ALLOW, "GET, POST, DELETE").end());
    }
    router.route().last().handler(ctx -> httpError(ctx, 404, "Nothing is served at this path; the MCP endpoint is " + path + "."));
    cancelConsumer = vertx.eventBus().consumer(CANCEL_ADDRESS, msg -> {
      Held call = inflight.remove(msg.body().getString("key"));
      if (call != null) {
        call.stop().run();
      }
    });
    return cancelConsumer.completion().compose(v -> sessions.start()).compose(v -> notifier.start())
        .compose(v -> authenticator == null ? Future.succeededFuture() : authenticator.start(this::revoked));
  }

  /** Ends open streams gracefully: listen streams get their completion result, then every stream closes. */
  public Future<Void> stop() {
    new ArrayList<>(openStreams.values()).forEach(held -> held.stop().run());
    return (authenticator == null ? Future.<Void>succeededFuture() : authenticator.stop())
        .compose(v -> notifier.stop()).compose(v -> sessions.stop())
        .compose(v -> cancelConsumer == null ? Future.succeededFuture() : cancelConsumer.unregister());
  }

  /**
   * A token stopped being valid: the authenticator already refuses it. Every gateway hears of it
   * itself, so each ends only what it holds: the caller's streams, its calls in flight (long polls
   * included), and the sessions of its streams; any other session of the caller is refused by
   * {@link SessionStore#find} wherever it is used.
   */
  private void revoked(dev.tidemark.auth.Revocation r) {
    revocations.note(r);
    List<Held> ending = new ArrayList<>();
    for (Map<String, Held> held : List.of(openStreams, inflight)) {
      held.values().stream().filter(h -> h.callerId().equals(r.callerId())).forEach(ending::add);
    }
    if (!ending.isEmpty()) {
      LOG.info("token of caller {} revoked: ending {} streams and calls on this node", r.callerId(), ending.size());
    }
    ending.forEach(h -> h.revoke().run());
  }

  /**
   * Registers what this node holds for a caller; when the caller's token was revoked after its
   * credentials were checked (the row read may have predated the revocation), it ends at once.
   */
  private void hold(Map<String, Held> map, String key, Held held, long authenticatedAtNanos) {
    map.put(key, held);
    if (revocations.heardSince(held.callerId(), authenticatedAtNanos)) {
      held.revoke().run();
    }
  }

  // ---- guards: each either refuses the request or hands it on ----

  /** Headers a request may carry once: with two, a proxy and Tidemark could each act on a different one. */
  private static final List<String> SINGLE_HEADERS = List.of("Authorization", "Origin", "Host");

  private boolean checkOriginHostDatabase(RoutingContext ctx) {
    for (String name : SINGLE_HEADERS) {
      if (ctx.request().headers().getAll(name).size() > 1) {
        httpError(ctx, 400, "Send at most one " + name + " header; this request has several.");
        return false;
      }
    }
    String origin = ctx.request().getHeader(HttpHeaders.ORIGIN);
    if (origin != null && !originAllowed(origin)) {
      httpError(ctx, 403, "Requests from this Origin are not allowed.");
      return false;
    }
    if (loopbackOnly && !hostIsLoopback(ctx.request().getHeader(HttpHeaders.HOST))) {
      httpError(ctx, 403, "This server only answers requests addressed to a loopback host.");
      return false;
    }
    String database = ctx.pathParam("database");
    if (database == null) {
      database = config.database().name();
    } else if (!database.equals(config.database().name())) {
      httpError(ctx, 404, "No database is served at this path; the endpoint is " + config.http().path() + ".");
      return false;
    }
    ctx.put(DATABASE, database);
    return true;
  }

  /** Completes when the request may go on; otherwise answers 401, 403 or 503 itself and never completes. */
  private Future<Caller> authenticate(RoutingContext ctx) {
    if (authenticator == null) {
      ctx.put(AUTHENTICATED_AT, System.nanoTime());
      if (!slots.authenticate(ctx.request().connection())) {
        overCapacity(ctx);
        return Future.future(p -> {});
      }
      Caller anonymous = new Caller("anonymous", "anonymous", config.anonymousRole(), Access.READ_ONLY, List.of("*"));
      ctx.put(CALLER, anonymous);
      return Future.succeededFuture(anonymous);
    }
    long started = System.nanoTime();
    ctx.put(AUTHENTICATED_AT, started);
    return authenticator.authenticate(ctx.request().getHeader(HttpHeaders.AUTHORIZATION))
        .compose(caller -> revocations.heardSince(caller.id(), started)
            ? Future.failedFuture(new AuthenticationException(REVOKED_MESSAGE)) // checked against a row read before the revocation
            : Future.succeededFuture(caller))
        .compose(caller -> {
          if (!caller.mayReach((String) ctx.get(DATABASE))) {
            httpError(ctx, 403, "This token may not reach this database.");
            return Future.<Caller>future(p -> {});
          }
          if (!slots.authenticate(ctx.request().connection())) {
            overCapacity(ctx);
            return Future.<Caller>future(p -> {});
          }
          ctx.put(CALLER, caller);
          return Future.succeededFuture(caller);
        }, err -> {
          boolean refused = err instanceof AuthenticationException;
          String message = refused ? err.getMessage() : "Credentials could not be checked right now; retry shortly.";
          vertx.setTimer(FAILED_AUTH_DELAY_MILLIS, t -> {
            if (refused) {
              // a socket that failed its credential check is let go, however it authenticated before
              ctx.response().putHeader("WWW-Authenticate", INVALID_TOKEN_CHALLENGE)
                  .putHeader(HttpHeaders.CONNECTION, "close");
            }
            httpError(ctx, refused ? 401 : 503, message);
          });
          return Future.future(p -> {});
        });
  }

  private void overCapacity(RoutingContext ctx) {
    ctx.response().putHeader(HttpHeaders.RETRY_AFTER, "1").putHeader(HttpHeaders.CONNECTION, "close");
    httpError(ctx, 503, "This gateway holds its maximum of " + slots.maxAuthenticated()
        + " authenticated connections; retry shortly, or reuse an open connection.");
  }

  // ---- POST ----

  private void post(RoutingContext ctx) {
    ctx.request().pause();
    if (!checkOriginHostDatabase(ctx)) {
      return;
    }
    String contentType = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    // the media type is what comes before any parameters; a header of only ";" has an empty one
    String mediaType = contentType == null ? null : contentType.substring(0, contentType.indexOf(';') < 0 ? contentType.length() : contentType.indexOf(';'));
    if (mediaType == null || !mediaType.trim().equalsIgnoreCase("application/json")) {
      httpError(ctx, 415, "Send the JSON-RPC message with Content-Type: application/json.");
      return;
    }
    authenticate(ctx).onSuccess(caller -> {
      String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
      if (length != null && parseLong(length) > config.http().maxBodyBytes()) {
        tooLarge(ctx);
        return;
      }
      readBody(ctx.request(), config.http().maxBodyBytes(), config.http().bodyTimeoutMs())
          .onSuccess(body -> {
            try {
              handleMessage(ctx, caller, body);
            } catch (RuntimeException e) {
              // a bug must cost one request an error, never leave it hanging
              LOG.error("request failed unexpectedly", e);
              reply(ctx, 500, JsonRpc.error(null, JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists."));
            }
          })
          .onFailure(err -> {
            if (err instanceof BodyTooLarge) {
              tooLarge(ctx);
            } else if (err instanceof BodyTimeout) {
              httpError(ctx, 408, "The body did not arrive within " + config.http().bodyTimeoutMs() + " ms.");
            } else {
              ctx.response().reset(); // the client went away mid-body: nobody to answer
            }
          });
    });
  }

  private void tooLarge(RoutingContext ctx) {
    httpError(ctx, 413, "The body is larger than " + config.http().maxBodyBytes() + " bytes.");
  }

  private Future<Buffer> readBody(HttpServerRequest request, long max, long deadlineMs) {
    Promise<Buffer> promise = Promise.promise();
    Buffer body = Buffer.buffer();
    long timer = vertx.setTimer(deadlineMs, t -> promise.tryFail(new BodyTimeout()));
    request.handler(chunk -> {
      if (promise.future().isComplete()) {
        return;
      }
      if (body.length() + chunk.length() > max) {
        promise.tryFail(new BodyTooLarge());
      } else {
        body.appendBuffer(chunk);
      }
    });
    request.exceptionHandler(promise::tryFail);
    request.endHandler(v -> promise.tryComplete(body));
    request.resume();
    return promise.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  private static final class BodyTooLarge extends RuntimeException {
    BodyTooLarge() {
      super("body too large", null, false, false);
    }
  }

  private static final class BodyTimeout extends RuntimeException {
    BodyTimeout() {
      super("body deadline", null, false, false);
    }
  }

  private void handleMessage(RoutingContext ctx, Caller caller, Buffer body) {
    Object parsed;
    try {
      parsed = body.length() == 0 ? null : Json.decodeValue(body);
    } catch (DecodeException e) {
      reply(ctx, 400, JsonRpc.error(null, JsonRpc.PARSE_ERROR, "The body is not valid JSON."));
      return;
    }
    if (parsed instanceof JsonArray) {
      reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "JSON-RPC batches are not supported: send one message per POST."));
      return;
    }
    if (!(parsed instanceof JsonObject msg)) {
      reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "The body must be one JSON-RPC message (a JSON object)."));
      return;
    }
    Object id = msg.getValue("id");
    boolean hasId = msg.containsKey("id");
    if (hasId && !validId(id)) {
      reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "The id must be a string or an integer."));
      return;
    }
    if (!"2.0".equals(msg.getValue("jsonrpc"))) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The message must carry \"jsonrpc\": \"2.0\"."));
      return;
    }
    Object method = msg.getValue("method");
    if (method == null) {
      if (hasId && (msg.containsKey("result") || msg.containsKey("error"))) {
        serverRequests.deliver(msg); // an answer to a request this server sent, possibly from another node
        ctx.response().setStatusCode(202).end();
      } else {
        reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The message has no method."));
      }
      return;
    }
    if (!(method instanceof String name)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The method must be a string."));
      return;
    }
    Object params = msg.getValue("params");
    if (params != null && !(params instanceof JsonObject)) {
      reply(ctx, hasId ? 200 : 400, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "The params must be an object."));
      return;
    }
    JsonObject p = params == null ? new JsonObject() : (JsonObject) params;
    Object meta = p.getValue("_meta");
    if (meta != null && !(meta instanceof JsonObject)) {
      reply(ctx, hasId ? 200 : 400, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "params._meta must be an object."));
      return;
    }
    JsonObject m = meta == null ? new JsonObject() : (JsonObject) meta;
    String headerVersion = ctx.request().getHeader(VERSION_HEADER);
    boolean modern = m.containsKey(McpMethods.META_VERSION) || (headerVersion != null && McpVersions.MODERN.contains(headerVersion));
    if (modern) {
      handleModern(ctx, caller, id, hasId, name, p, m, headerVersion);
    } else {
      handleLegacy(ctx, caller, id, hasId, name, p, headerVersion);
    }
  }

  // ---- 2025-11-25 and older: sessions ----

  private void handleLegacy(RoutingContext ctx, Caller caller, Object id, boolean hasId, String name, JsonObject p, String version) {
    if (!"initialize".equals(name) && version != null && !McpVersions.SUPPORTED.contains(version)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST,
          "Unsupported MCP-Protocol-Version; supported: " + String.join(", ", McpVersions.ALL) + "."));
      return;
    }
    String database = ctx.get(DATABASE);
    if ("initialize".equals(name)) {
      if (!hasId) {
        reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "initialize is a request: give it an id."));
        return;
      }
      initialize(ctx, id, p, caller, database);
      return;
    }
    String sessionId = ctx.request().getHeader(SESSION_HEADER);
    if (sessionId == null) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "Send the Mcp-Session-Id header that initialize returned."));
      return;
    }
    sessions.find(sessionId, caller.id(), database)
        .onFailure(err -> reply(ctx, 503, JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, "Session storage is unavailable; retry shortly.")))
        .onSuccess(session -> {
          if (session == null) {
            reply(ctx, 404, JsonRpc.error(id, SESSION_NOT_FOUND, "Session not found: it ended or expired. Initialize a new session."));
            return;
          }
          if (!hasId) {
            if ("notifications/cancelled".equals(name) && p.getValue("requestId") != null) {
              String key = sessionId + "|" + Json.encode(p.getValue("requestId"));
              vertx.eventBus().publish(CANCEL_ADDRESS, new JsonObject().put("key", key));
            }
            ctx.response().setStatusCode(202).end(); // notifications need no answer
            return;
          }
          // "_meta": null is allowed (handleMessage checked that any other value is an object)
          JsonObject metaIn = p.getValue("_meta") instanceof JsonObject given ? given : new JsonObject();
          boolean stream = "tools/call".equals(name) && accepts(ctx, "text/event-stream")
              && mayPrecedeResponse(metaIn.getValue("progressToken"), session.getString("log_level"),
                  session.getJsonObject("client_capabilities"));
          ResponseChannel channel = stream
              ? ResponseChannel.sse(ctx.response(), events, sessionId, "post:" + Json.encode(id))
              : ResponseChannel.json(ctx.response());
          Call call = new Call(false, caller, database, sessionId, session, id, name, p, channel,
              session.getString("protocol_version"), session.getJsonObject("client_capabilities"),
              session.getString("log_level"), metaIn.getValue("progressToken"), null, new Cancellation(), ctx.get(AUTHENTICATED_AT));
          run(call);
        });
  }

  private void initialize(RoutingContext ctx, Object id, JsonObject params, Caller caller, String database) {
    Object requested = params.getValue("protocolVersion");
    String negotiated = McpVersions.negotiate(requested instanceof String r ? r : null);
    Object clientInfo = params.getValue("clientInfo");
    Object capabilities = params.getValue("capabilities");
    if (Json.encode(clientInfo).length() + Json.encode(capabilities).length() > MAX_CLIENT_DESCRIPTION_BYTES) {
      // the session keeps both for its lifetime: a client may not make it hold more
      reply(ctx, 200, JsonRpc.error(id, JsonRpc.INVALID_PARAMS,
          "clientInfo and capabilities may take at most " + MAX_CLIENT_DESCRIPTION_BYTES + " bytes together."));
      return;
    }
    sessions.create(caller.id(), database, negotiated, clientInfo instanceof JsonObject ci ? ci : null,
            capabilities instanceof JsonObject c ? c : null)
        .onFailure(err -> reply(ctx, 503, JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, "Session storage is unavailable; retry shortly.")))
        .onSuccess(sessionId -> {
          JsonObject result = new JsonObject()
              .put("protocolVersion", negotiated)
              .put("capabilities", methods.capabilities())
              .put("serverInfo", methods.serverInfo())
              .put("instructions", methods.instructions(database));
          ctx.response().putHeader(SESSION_HEADER, sessionId);
          reply(ctx, 200, JsonRpc.result(id, result));
        });
  }

  // ---- 2026-07-28: stateless, every request carries its version ----

  private void handleModern(RoutingContext ctx, Caller caller, Object id, boolean hasId, String name, JsonObject p, JsonObject meta,
      String headerVersion) {
    Object bodyVersion = meta.getValue(McpMethods.META_VERSION);
    if (headerVersion == null || !(bodyVersion instanceof String v) || !headerVersion.equals(v)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH,
          "Header mismatch: MCP-Protocol-Version must be sent and equal _meta." + McpMethods.META_VERSION + "."));
      return;
    }
    if (!McpVersions.MODERN.contains(v)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version.",
          new JsonObject().put("supported", new JsonArray(McpVersions.ALL)).put("requested", v)));
      return;
    }
    String methodHeader = ctx.request().getHeader(METHOD_HEADER);
    if (!name.equals(methodHeader)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH, "Header mismatch: Mcp-Method must be sent and equal the body's method."));
      return;
    }
    if (NAMED_METHODS.contains(name)) {
      Object bodyName = p.getValue("tools/call".equals(name) || "prompts/get".equals(name) ? "name" : "uri");
      String headerName = decodeHeaderValue(ctx.request().getHeader(NAME_HEADER));
      if (headerName == null || !headerName.equals(bodyName)) {
        reply(ctx, 400, JsonRpc.error(id, JsonRpc.HEADER_MISMATCH, "Header mismatch: Mcp-Name must be sent and equal the body's name or uri."));
        return;
      }
    }
    if (!hasId) {
      ctx.response().setStatusCode(202).end();
      return;
    }
    Object logLevel = meta.getValue(McpMethods.META_LOG_LEVEL);
    if (logLevel != null && !(logLevel instanceof String l && LogLevels.valid(l))) {
      reply(ctx, 200, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "_meta." + McpMethods.META_LOG_LEVEL + " must be one of "
          + String.join(", ", LogLevels.ORDER) + "."));
      return;
    }
    Object capabilities = meta.getValue(McpMethods.META_CAPABILITIES);
    Object inputResponses = p.getValue("inputResponses");
    Object progressToken = meta.getValue("progressToken");
    // this era has no server requests: a client's capabilities never call for a stream
    boolean stream = "subscriptions/listen".equals(name)
        || (mayPrecedeResponse(progressToken, (String) logLevel, null) && accepts(ctx, "text/event-stream"));
    ResponseChannel channel = stream ? ResponseChannel.sse(ctx.response(), null, null, null) : ResponseChannel.json(ctx.response());
    Call call = new Call(true, caller, ctx.get(DATABASE), null, null, id, name, p, channel, v,
        capabilities instanceof JsonObject c ? c : new JsonObject(), (String) logLevel, progressToken,
        inputResponses instanceof JsonObject ir ? ir : null, new Cancellation(), ctx.get(AUTHENTICATED_AT));
    if ("subscriptions/listen".equals(name)) {
      listen(call);
    } else {
      run(call);
    }
  }

  /** Decodes the {@code =?base64?...?=} form headers use for values that are not plain ASCII. */
  static String decodeHeaderValue(String value) {
    if (value != null && value.startsWith("=?base64?") && value.endsWith("?=") && value.length() >= 11) {
      try {
        return new String(Base64.getDecoder().decode(value.substring(9, value.length() - 2)), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return value;
  }

  private void listen(Call call) {
    Object filter = call.params().getValue("notifications");
    if (filter != null && !(filter instanceof JsonObject)) {
      call.channel().finish(200, JsonRpc.error(call.id(), JsonRpc.INVALID_PARAMS, "params.notifications must be an object."));
      return;
    }
    JsonObject wanted = filter == null ? new JsonObject() : (JsonObject) filter;
    Object uris = wanted.getValue("resourceSubscriptions");
    if (uris != null && !(uris instanceof JsonArray a && a.stream().allMatch(u -> u instanceof String))) {
      call.channel().finish(200, JsonRpc.error(call.id(), JsonRpc.INVALID_PARAMS, "resourceSubscriptions must be an array of URIs."));
      return;
    }
    List<String> resourceUris = uris == null ? List.of() : ((JsonArray) uris).stream().map(String.class::cast).distinct().toList();
    boolean listChanged = Boolean.TRUE.equals(wanted.getValue("resourcesListChanged"));
    JsonObject subscriptionMeta = new JsonObject().put(McpMethods.META_SUBSCRIPTION_ID, call.id());
    String listenerId = UUID.randomUUID().toString();
    ResponseChannel channel = call.channel();
    // each entry: the key the subscription is kept under, and the target that names this stream
    List<String[]> entries = new ArrayList<>();
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(Subscriptions.listenerAddress(listenerId), msg -> {
      JsonObject note = msg.body().copy();
      note.getJsonObject("params").put("_meta", subscriptionMeta.copy());
      channel.send(note);
      msg.reply(null);
    });
    long keepAlive = vertx.setPeriodic(KEEP_ALIVE_MILLIS, t -> channel.keepAlive());
    Runnable cleanup = () -> {
      vertx.cancelTimer(keepAlive);
      openStreams.remove(listenerId);
      consumer.unregister();
      entries.forEach(e -> subscriptions.remove(call.database(), e[0], e[1]));
    };
    channel.onClose(cleanup);
    hold(openStreams, listenerId, new Held(call.caller().id(),
        () -> channel.finish(200, JsonRpc.result(call.id(), new JsonObject()
            .put("resultType", "complete").put("_meta", subscriptionMeta.copy()))).onComplete(ar -> cleanup.run()),
        () -> channel.revoked(JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, REVOKED_MESSAGE)).onComplete(ar -> cleanup.run())),
        call.authenticatedAtNanos());
    if (channel.closed()) {
      return; // revoked while its credentials were being checked
    }
    List<Future<String[]>> resolving = new ArrayList<>();
    for (String uri : resourceUris) {
      // a URI that names nothing the caller may subscribe to is left out of the acknowledgement
      resolving.add(methods.canonical(call, uri).map(key -> key == null ? null
          : new String[] {key, Subscriptions.listenerTarget(listenerId, uri), uri}).otherwise((String[]) null));
    }
    if (listChanged) {
      resolving.add(Future.succeededFuture(new String[] {Subscriptions.LIST_CHANGED,
          Subscriptions.listenerTarget(listenerId, Subscriptions.LIST_CHANGED), null}));
    }
    consumer.completion()
        .compose(v -> Future.all(resolving))
        .compose(all -> {
          JsonArray honoured = new JsonArray();
          for (Future<String[]> f : resolving) {
            String[] e = f.result();
            if (e != null) {
              entries.add(e);
              if (e[2] != null) {
                honoured.add(e[2]);
              }
            }
          }
          JsonObject acknowledged = new JsonObject();
          if (listChanged) {
            acknowledged.put("resourcesListChanged", true);
          }
          if (!honoured.isEmpty()) {
            acknowledged.put("resourceSubscriptions", honoured);
          }
          return Future.all(entries.stream().map(e -> subscriptions.add(call.database(), e[0], e[1])).toList())
              .compose(v -> channel.open())
              .compose(v -> channel.send(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/subscriptions/acknowledged")
                  .put("params", new JsonObject().put("_meta", subscriptionMeta.copy()).put("notifications", acknowledged))));
        })
        .onFailure(err -> {
          LOG.warn("listen stream failed to open: {}", err.toString());
          cleanup.run();
          channel.finish(200, JsonRpc.error(call.id(), JsonRpc.INTERNAL_ERROR, "The subscription could not be opened; retry shortly."));
        });
  }

  // ---- running a request, whichever era ----

  private void run(Call call) {
    ResponseChannel channel = call.channel();
    String key = call.modern() ? UUID.randomUUID().toString() : call.inflightKey();
    Runnable cancel = () -> {
      call.cancellation().cancel();
      channel.abandon();
    };
    Runnable revoke = () -> {
      if (inflight.remove(key) != null) {
        call.cancellation().cancel();
        channel.revoked(JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, REVOKED_MESSAGE));
      }
    };
    hold(inflight, key, new Held(call.caller().id(), cancel, revoke), call.authenticatedAtNanos());
    if (!inflight.containsKey(key)) {
      return; // revoked while its credentials were being checked
    }
    if (call.modern()) {
      // closing the response stream is the cancellation on this era
      channel.onClose(() -> {
        if (inflight.remove(key) != null) {
          call.cancellation().cancel();
        }
      });
    }
    channel.open()
        .compose(v -> methods.dispatch(call))
        .onComplete(ar -> {
          if (inflight.remove(key) == null) {
            return; // cancelled: the request gets no response
          }
          JsonObject message;
          int status = 200;
          if (ar.succeeded()) {
            JsonObject result = ar.result();
            if (call.modern()) {
              result.put("resultType", result.getString("resultType", "complete"));
              result.put("_meta", result.getJsonObject("_meta", new JsonObject()).put(McpMethods.META_SERVER_INFO, methods.serverInfo()));
            }
            message = JsonRpc.result(call.id(), result);
          } else if (ar.cause() instanceof McpMethods.RpcFailure f) {
            message = JsonRpc.error(call.id(), f.code, f.getMessage(), f.data);
            status = f.httpStatus;
          } else {
            LOG.warn("{} failed", call.method(), ar.cause());
            message = JsonRpc.error(call.id(), JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists.");
          }
          channel.finish(status, message);
        });
  }

  // ---- GET: the session's stream of server messages ----

  private void get(RoutingContext ctx) {
    if (!checkOriginHostDatabase(ctx)) {
      return;
    }
    authenticate(ctx).onSuccess(caller -> {
      String sessionId = ctx.request().getHeader(SESSION_HEADER);
      if (sessionId == null) {
        ctx.response().putHeader(HttpHeaders.ALLOW, "POST");
        httpError(ctx, 405, "GET opens the stream of a 2025-11-25 session: send its Mcp-Session-Id. The 2026-07-28 era uses subscriptions/listen.");
        return;
      }
      if (!accepts(ctx, "text/event-stream")) {
        httpError(ctx, 406, "GET answers with an SSE stream: send Accept: text/event-stream.");
        return;
      }
      String database = ctx.get(DATABASE);
      sessions.find(sessionId, caller.id(), database)
          .onFailure(err -> httpError(ctx, 503, "Session storage is unavailable; retry shortly."))
          .onSuccess(session -> {
            if (session == null) {
              reply(ctx, 404, JsonRpc.error(null, SESSION_NOT_FOUND, "Session not found: it ended or expired. Initialize a new session."));
            } else {
              openGetStream(ctx, caller, sessionId, database, ctx.request().getHeader("Last-Event-ID"));
            }
          });
    });
  }

  private void openGetStream(RoutingContext ctx, Caller caller, String sessionId, String database, String lastEventId) {
    long lastId = lastEventId == null ? -1 : parseLong(lastEventId);
    ResponseChannel channel = ResponseChannel.sse(ctx.response(), events, sessionId, EventLog.GET_STREAM);
    Future<EventLog.Replay> replay = lastId < 0 ? Future.succeededFuture(new EventLog.Replay(EventLog.GET_STREAM, List.of()))
        : events.after(sessionId, lastId);
    replay.onFailure(err -> httpError(ctx, 503, "Session storage is unavailable; retry shortly.")).onSuccess(r -> {
      boolean resumingPost = r.stream() != null && !EventLog.GET_STREAM.equals(r.stream());
      ctx.response().setStatusCode(200).setChunked(true)
          .putHeader(HttpHeaders.CONTENT_TYPE, "text/event-stream")
          .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache, no-transform")
          .putHeader("X-Accel-Buffering", "no");
      if (resumingPost) {
        // a POST stream resumed: what it missed, then it ends as the POST stream would have
        Future<Void> written = Future.succeededFuture();
        for (JsonObject e : r.events()) {
          written = written.compose(v -> channel.forward(e.getLong("id"), e.getJsonObject("message")));
        }
        written.onComplete(ar -> ctx.response().end());
        return;
      }
      String streamId = UUID.randomUUID().toString();
      long[] lastSent = {lastId};
      List<JsonObject> early = new ArrayList<>();
      boolean[] replayed = {false};
      vertx.eventBus().publish(EventLog.liveAddress(sessionId), new JsonObject().put("takeover", streamId));
      MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(EventLog.liveAddress(sessionId), msg -> {
        JsonObject body = msg.body();
        if (body.containsKey("takeover")) {
          if (!streamId.equals(body.getString("takeover"))) {
            Held stream = openStreams.get(streamId);
            if (stream != null) {
              stream.stop().run(); // the client opened a newer stream, on this node or another
            }
          }
          return;
        }
        if (!replayed[0]) {
          early.add(body);
          return;
        }
        forwardLive(channel, body, lastSent);
      });
      long keepAlive = vertx.setPeriodic(KEEP_ALIVE_MILLIS, t -> channel.keepAlive());
      Runnable cleanup = () -> {
        vertx.cancelTimer(keepAlive);
        openStreams.remove(streamId);
        consumer.unregister();
      };
      channel.onClose(cleanup);
      Runnable close = () -> {
        cleanup.run();
        if (!channel.closed()) {
          ctx.response().end();
        }
      };
      // a revoked caller's stream ends as at node stop, and its session with it, as a DELETE would
      Runnable endSession = () -> sessions.delete(sessionId, caller.id())
          .onSuccess(deleted -> {
            if (deleted) {
              sessionEnded(sessionId, database);
            }
          });
      hold(openStreams, streamId, new Held(caller.id(), close, () -> {
        close.run();
        endSession.run();
      }), ctx.get(AUTHENTICATED_AT));
      if (channel.closed()) {
        return; // revoked while its credentials were being checked
      }
      consumer.completion()
          .compose(v -> subscriptions.add(database, Subscriptions.LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.LIST_CHANGED)))
          .compose(v -> ctx.response().write(":\n\n"))
          .onSuccess(v -> {
            for (JsonObject e : r.events()) {
              channel.forward(e.getLong("id"), e.getJsonObject("message"));
              lastSent[0] = Math.max(lastSent[0], e.getLong("id"));
            }
            replayed[0] = true;
            early.forEach(body -> forwardLive(channel, body, lastSent));
            early.clear();
          });
    });
  }

  private static void forwardLive(ResponseChannel channel, JsonObject body, long[] lastSent) {
    long id = body.getLong("id");
    if (id > lastSent[0]) {
      lastSent[0] = id;
      channel.forward(id, body.getJsonObject("message"));
    }
  }

  // ---- DELETE ----

  private void delete(RoutingContext ctx) {
    if (!checkOriginHostDatabase(ctx)) {
      return;
    }
    authenticate(ctx).onSuccess(caller -> {
      String sessionId = ctx.request().getHeader(SESSION_HEADER);
      if (sessionId == null) {
        reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "Send the Mcp-Session-Id header of the session to end."));
        return;
      }
      sessions.delete(sessionId, caller.id())
          .onFailure(err -> reply(ctx, 503, JsonRpc.error(null, JsonRpc.INTERNAL_ERROR, "Session storage is unavailable; retry shortly.")))
          .onSuccess(deleted -> {
            if (deleted) {
              sessionEnded(sessionId, ctx.get(DATABASE));
              ctx.response().setStatusCode(200).end();
            } else {
              reply(ctx, 404, JsonRpc.error(null, SESSION_NOT_FOUND, "Session not found: it ended or expired."));
            }
          });
    });
  }

  /** What follows a session's removal from storage: its GET stream, wherever it is, closes, and its replay store goes. */
  private void sessionEnded(String sessionId, String database) {
    vertx.eventBus().publish(EventLog.liveAddress(sessionId), new JsonObject().put("takeover", "ended"));
    events.forget(sessionId);
    subscriptions.remove(database, Subscriptions.LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.LIST_CHANGED));
  }

  // ---- helpers ----

  /**
   * Whether a call may send the client anything before its response: progress it asked for, log
   * messages at the level it set, or a server request (elicitation, sampling, roots) it declared
   * it can answer. Only then is an event stream worth its cost; any other answer is one JSON body,
   * which is also the shape every client reads.
   */
  private static boolean mayPrecedeResponse(Object progressToken, String logLevel, JsonObject clientCapabilities) {
    if (progressToken != null || logLevel != null) {
      return true;
    }
    return clientCapabilities != null && SERVER_REQUEST_CAPABILITIES.stream().anyMatch(clientCapabilities::containsKey);
  }

  private static boolean accepts(RoutingContext ctx, String mediaType) {
    String accept = ctx.request().getHeader(HttpHeaders.ACCEPT);
    return accept != null && (accept.contains(mediaType) || accept.contains("*/*"));
  }

  private void httpError(RoutingContext ctx, int status, String message) {
    reply(ctx, status, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, message));
  }

  private void reply(RoutingContext ctx, int status, JsonObject body) {
    var response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    boolean unread = status >= 400 && !ctx.request().isEnded();
    boolean letGo = "close".equalsIgnoreCase(response.headers().get(HttpHeaders.CONNECTION))
        || status >= 400 && !slots.isAuthenticated(ctx.request().connection());
    if (unread || letGo) {
      // the body was never read: ask the client to close rather than drain what may be a huge upload
      response.putHeader(HttpHeaders.CONNECTION, "close");
    }
    Future<Void> written = response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
    if (letGo) {
      // a socket that never authenticated, or failed to, is closed by the server after any refusal:
      // the header alone binds only clients that play fair, and such sockets must not pile up
      written.onComplete(ar -> closeCleanly(ctx.request()));
    }
  }

  /**
   * Closes a connection once what the client already sent is read and dropped, for at most
   * {@link #LINGER_MILLIS}: closing a socket with unread input makes the kernel send a reset,
   * which can destroy the answer before the client reads it.
   */
  private void closeCleanly(HttpServerRequest request) {
    HttpConnection connection = request.connection();
    if (request.isEnded()) {
      connection.close();
      return;
    }
    long timer = vertx.setTimer(LINGER_MILLIS, t -> connection.close());
    Runnable close = () -> {
      vertx.cancelTimer(timer);
      connection.close();
    };
    request.handler(chunk -> {});
    request.exceptionHandler(err -> close.run());
    request.endHandler(v -> close.run());
    request.resume();
  }

  private static boolean validId(Object id) {
    return id instanceof String || id instanceof Integer || id instanceof Long
        || (id instanceof Number n && !(id instanceof Double || id instanceof Float) && n.longValue() == n.doubleValue());
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private boolean originAllowed(String origin) {
    return config.http().allowedOrigins().contains(origin) || originIsLoopback(origin);
  }

  /** An origin is a scheme, a host and maybe a port, nothing else; its host must be a loopback literal or localhost. */
  static boolean originIsLoopback(String origin) {
    try {
      URI uri = new URI(origin);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getRawUserInfo() == null
          && (uri.getRawPath() == null || uri.getRawPath().isEmpty()) && uri.getRawQuery() == null && uri.getRawFragment() == null
          && TidemarkConfig.isLoopback(uri.getHost());
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  /** A Host header of a loopback name or literal, with or without a port; anything more is refused. */
  static boolean hostIsLoopback(String host) {
    if (host == null) {
      return true; // HTTP/1.0 without Host: nothing to rebind
    }
    String name;
    String port;
    if (host.startsWith("[")) {
      int close = host.indexOf(']');
      if (close < 0) {
        return false;
      }
      name = host.substring(0, close + 1);
      port = host.substring(close + 1);
    } else {
      int colon = host.indexOf(':');
      name = colon < 0 ? host : host.substring(0, colon);
      port = colon < 0 ? "" : host.substring(colon);
    }
    return (port.isEmpty() || port.matches(":[0-9]{1,5}")) && TidemarkConfig.isLoopback(name);
  }
}
