package dev.tidemark.gateway.impl;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.config.TidemarkConfig;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Streamable HTTP MCP endpoint. Requests are checked before the body is read, in the order
 * the contract gives: Origin and Host (403), content type (415), credentials (401), body size
 * (413); then the JSON-RPC message is read and dispatched.
 */
public final class McpEndpoint {

  private static final Logger LOG = LoggerFactory.getLogger(McpEndpoint.class);

  public static final String SESSION_HEADER = "Mcp-Session-Id";
  public static final String VERSION_HEADER = "MCP-Protocol-Version";
  /** A failed credential check is answered no sooner than this, to slow down guessing. */
  public static final long FAILED_AUTH_DELAY_MILLIS = 250;
  /** JSON-RPC code of a 404 for an unknown or ended session. */
  public static final int SESSION_NOT_FOUND = -32001;

  private static final String CALLER = "tidemark.caller";
  private static final String DATABASE = "tidemark.database";

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final SessionStore sessions;
  private final List<ToolDescriptor> tools;
  private final ArgumentValidator validator;
  private final boolean loopbackOnly;

  public McpEndpoint(Vertx vertx, NodeInfo node, TidemarkConfig config, Authenticator authenticator) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.authenticator = authenticator;
    this.sessions = new SessionStore(vertx);
    this.tools = ToolCatalog.all();
    this.validator = new ArgumentValidator(tools);
    this.loopbackOnly = isLoopback(config.http().host());
  }

  public void mount(Router router) {
    String path = config.http().path();
    for (String p : List.of(path, path + "/:database")) {
      router.post(p).handler(this::guardPost);
      router.delete(p).handler(this::guardDelete).handler(this::handleDelete);
      router.route(p).handler(ctx -> ctx.response().setStatusCode(405).putHeader(HttpHeaders.ALLOW, "POST, DELETE").end());
    }
    router.route().last().handler(ctx -> httpError(ctx, 404, "Nothing is served at this path; the MCP endpoint is " + path + "."));
  }

  // ---- guards: each either refuses the request or hands it on ----

  private void guardPost(RoutingContext ctx) {
    ctx.request().pause();
    if (!checkDatabaseAndOrigin(ctx)) {
      return;
    }
    String contentType = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    if (contentType == null || !contentType.split(";")[0].trim().equalsIgnoreCase("application/json")) {
      httpError(ctx, 415, "Send the JSON-RPC message with Content-Type: application/json.");
      return;
    }
    authenticate(ctx).onSuccess(ok -> {
      String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
      if (length != null && parseLong(length) > config.http().maxBodyBytes()) {
        tooLarge(ctx);
        return;
      }
      readBody(ctx.request(), config.http().maxBodyBytes())
          .onSuccess(body -> handlePost(ctx, body))
          .onFailure(err -> {
            if (err instanceof BodyTooLarge) {
              tooLarge(ctx);
            } else {
              ctx.response().reset(); // the client went away mid-body: nobody to answer
            }
          });
    });
  }

  private void tooLarge(RoutingContext ctx) {
    httpError(ctx, 413, "The body is larger than " + config.http().maxBodyBytes() + " bytes.");
  }

  /** Reads the body up to {@code max} bytes; a longer one fails with {@link BodyTooLarge} as soon as it passes the cap. */
  private static Future<Buffer> readBody(HttpServerRequest request, long max) {
    Promise<Buffer> promise = Promise.promise();
    Buffer body = Buffer.buffer();
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
    return promise.future();
  }

  private static final class BodyTooLarge extends RuntimeException {
    BodyTooLarge() {
      super("body too large", null, false, false);
    }
  }

  private void guardDelete(RoutingContext ctx) {
    if (checkDatabaseAndOrigin(ctx)) {
      authenticate(ctx).onSuccess(ok -> ctx.next());
    }
  }

  private boolean checkDatabaseAndOrigin(RoutingContext ctx) {
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

  /** Completes when the request may go on; otherwise answers 401 or 403 itself and never completes. */
  private Future<Void> authenticate(RoutingContext ctx) {
    if (authenticator == null) {
      ctx.put(CALLER, anonymous());
      return Future.succeededFuture();
    }
    return authenticator.authenticate(ctx.request().getHeader(HttpHeaders.AUTHORIZATION))
        .compose(caller -> {
          if (!caller.mayReach((String) ctx.get(DATABASE))) {
            httpError(ctx, 403, "This token may not reach this database.");
            return Future.<Void>future(p -> {});
          }
          ctx.put(CALLER, caller);
          return Future.<Void>succeededFuture();
        }, err -> {
          String message = err instanceof AuthenticationException ? err.getMessage() : "Credentials could not be checked right now; retry shortly.";
          int status = err instanceof AuthenticationException ? 401 : 503;
          vertx.setTimer(FAILED_AUTH_DELAY_MILLIS, t -> {
            if (status == 401) {
              ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"tidemark\", error=\"invalid_token\"");
            }
            httpError(ctx, status, message);
          });
          return Future.future(p -> {});
        });
  }

  private Caller anonymous() {
    return new Caller("anonymous", "anonymous", config.database().user(), dev.tidemark.contract.Access.READ_ONLY, List.of("*"));
  }

  // ---- the JSON-RPC message ----

  private void handlePost(RoutingContext ctx, Buffer body) {
    Object parsed;
    try {
      parsed = body == null || body.length() == 0 ? null : Json.decodeValue(body);
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
        ctx.response().setStatusCode(202).end(); // a response to a request this server sent
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
    String version = ctx.request().getHeader(VERSION_HEADER);
    if (!"initialize".equals(name) && version != null && !McpVersions.SUPPORTED.contains(version)) {
      reply(ctx, 400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST,
          "Unsupported MCP-Protocol-Version; supported: " + String.join(", ", McpVersions.SUPPORTED) + "."));
      return;
    }
    Caller caller = ctx.get(CALLER);
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
          } else if (!hasId) {
            ctx.response().setStatusCode(202).end(); // notifications need no answer
          } else {
            dispatch(name, p, caller, database)
                .onSuccess(result -> reply(ctx, 200, JsonRpc.result(id, result)))
                .onFailure(err -> reply(ctx, 200, rpcError(id, err)));
          }
        });
  }

  private void initialize(RoutingContext ctx, Object id, JsonObject params, Caller caller, String database) {
    String negotiated = McpVersions.negotiate(params.getString("protocolVersion"));
    Object clientInfo = params.getValue("clientInfo");
    sessions.create(caller.id(), database, negotiated, clientInfo instanceof JsonObject ci ? ci : null)
        .onFailure(err -> reply(ctx, 503, JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, "Session storage is unavailable; retry shortly.")))
        .onSuccess(sessionId -> {
          JsonObject result = new JsonObject()
              .put("protocolVersion", negotiated)
              .put("capabilities", new JsonObject().put("tools", new JsonObject().put("listChanged", false)))
              .put("serverInfo", new JsonObject().put("name", "tidemark").put("title", "Tidemark").put("version", node.version()))
              .put("instructions", "Tidemark serves the PostgreSQL database '" + database + "'. Call status to learn who you are "
                  + "and what you may do, then list_tables to see what you can read.");
          ctx.response().putHeader(SESSION_HEADER, sessionId);
          reply(ctx, 200, JsonRpc.result(id, result));
        });
  }

  private Future<JsonObject> dispatch(String method, JsonObject params, Caller caller, String database) {
    return switch (method) {
      case "ping" -> Future.succeededFuture(new JsonObject());
      case "tools/list" -> Future.succeededFuture(new JsonObject().put("tools", new JsonArray(tools.stream().map(ToolDescriptor::toMcp).toList())));
      case "tools/call" -> callTool(params, caller, database);
      default -> Future.failedFuture(new RpcFailure(JsonRpc.METHOD_NOT_FOUND, "Method not found; this server speaks MCP " + McpVersions.LATEST + "."));
    };
  }

  private Future<JsonObject> callTool(JsonObject params, Caller caller, String database) {
    Object name = params.getValue("name");
    ToolDescriptor tool = name instanceof String s ? ToolCatalog.find(s).orElse(null) : null;
    if (tool == null) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "Unknown tool; call tools/list to see the tools you may call."));
    }
    Object rawArgs = params.getValue("arguments");
    if (rawArgs != null && !(rawArgs instanceof JsonObject)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "The arguments of tools/call must be an object."));
    }
    JsonObject arguments = rawArgs == null ? new JsonObject() : (JsonObject) rawArgs;
    JsonArray faults = validator.faults(tool.name(), arguments);
    if (!faults.isEmpty()) {
      ToolException invalid = new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "The arguments do not fit the inputSchema of " + tool.name() + " (" + faults.size()
              + (faults.size() == 1 ? " fault" : " faults") + "). " + ErrorCode.INVALID_ARGUMENTS.hint(),
          new JsonObject().put("faults", faults));
      return Future.succeededFuture(ResultRenderer.render(tool.name(), ToolReply.failed(invalid)));
    }
    ToolRequest request = new ToolRequest(UUID.randomUUID().toString(), database, tool.name(), arguments, caller);
    DeliveryOptions options = new DeliveryOptions()
        .addHeader(Addresses.ACTION_HEADER, Actions.TOOL_CALL)
        .setSendTimeout(config.busSendTimeoutMs());
    return vertx.eventBus().<JsonObject>request(Addresses.forService(tool.service(), database), request.toJson(), options)
        .map(msg -> ToolReply.fromJson(msg.body()))
        .recover(err -> Future.succeededFuture(ToolReply.failed(busFailure(tool, err))))
        .map(reply -> ResultRenderer.render(tool.name(), reply));
  }

  private ToolException busFailure(ToolDescriptor tool, Throwable err) {
    if (err instanceof ReplyException re && (re.failureType() == ReplyFailure.NO_HANDLERS || re.failureType() == ReplyFailure.TIMEOUT)) {
      String why = re.failureType() == ReplyFailure.TIMEOUT
          ? "No " + tool.service().name().toLowerCase(Locale.ROOT) + " service answered within " + config.busSendTimeoutMs() + " ms."
          : "No " + tool.service().name().toLowerCase(Locale.ROOT) + " service is running in the cluster.";
      return new ToolException(ErrorCode.UNAVAILABLE, why + " " + ErrorCode.UNAVAILABLE.hint());
    }
    LOG.warn("tool {} failed on the event bus: {}", tool.name(), err.toString());
    return new ToolException(ErrorCode.INTERNAL, "The service failed while running the tool. " + ErrorCode.INTERNAL.hint());
  }

  private void handleDelete(RoutingContext ctx) {
    String sessionId = ctx.request().getHeader(SESSION_HEADER);
    if (sessionId == null) {
      reply(ctx, 400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "Send the Mcp-Session-Id header of the session to end."));
      return;
    }
    Caller caller = ctx.get(CALLER);
    sessions.delete(sessionId, caller.id())
        .onFailure(err -> reply(ctx, 503, JsonRpc.error(null, JsonRpc.INTERNAL_ERROR, "Session storage is unavailable; retry shortly.")))
        .onSuccess(deleted -> {
          if (deleted) {
            ctx.response().setStatusCode(200).end();
          } else {
            reply(ctx, 404, JsonRpc.error(null, SESSION_NOT_FOUND, "Session not found: it ended or expired."));
          }
        });
  }

  // ---- helpers ----

  /** A JSON-RPC level failure (as opposed to a tool error, which is a result). */
  static final class RpcFailure extends RuntimeException {
    final int code;

    RpcFailure(int code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  private static JsonObject rpcError(Object id, Throwable err) {
    if (err instanceof RpcFailure f) {
      return JsonRpc.error(id, f.code, f.getMessage());
    }
    LOG.warn("request failed", err);
    return JsonRpc.error(id, JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists.");
  }

  private static void httpError(RoutingContext ctx, int status, String message) {
    reply(ctx, status, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, message));
  }

  private static void reply(RoutingContext ctx, int status, JsonObject body) {
    HttpServerResponse response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    if (status >= 400 && !ctx.request().isEnded()) {
      // the body was never read: close after answering rather than drain what may be a huge upload
      response.putHeader(HttpHeaders.CONNECTION, "close");
    }
    response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
  }

  private static boolean validId(Object id) {
    return id instanceof String || id instanceof Integer || id instanceof Long
        || (id instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) && !(id instanceof Double d && d.isInfinite()));
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private boolean originAllowed(String origin) {
    if (config.http().allowedOrigins().contains(origin)) {
      return true;
    }
    try {
      URI uri = URI.create(origin);
      return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && isLoopback(uri.getHost());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static boolean hostIsLoopback(String host) {
    if (host == null) {
      return true; // HTTP/1.0 without Host: nothing to rebind
    }
    String h = host.startsWith("[") ? host.substring(0, host.indexOf(']') + 1) : host.split(":")[0];
    return isLoopback(h);
  }

  static boolean isLoopback(String host) {
    return TidemarkConfig.isLoopback(host);
  }
}
