package dev.tidemark.gateway.impl.tool;

import dev.tidemark.gateway.impl.service.ResultRenderer;
import dev.tidemark.gateway.impl.service.Grants;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.telemetry.LogContext;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.Service;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.CallContext;
import dev.tidemark.gateway.impl.call.InputRequired;
import dev.tidemark.gateway.impl.consent.Consent;
import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.method.MethodTable;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.task.Tasks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * {@code tools/list} and {@code tools/call}: the catalogue's tools the caller may call, then the
 * extensions'; a call's arguments checked against its schema before it waits for a slot, then run
 * by the service that owns the tool (or by its extension), with the user asked when a change
 * needs consent.
 */
public final class ToolMethods {

  /** How often a call that asked for progress hears that it is still running. */
  static final long PROGRESS_INTERVAL_MS = 1_000;

  private final Vertx vertx;
  private final ServiceClient services;
  private final Consent consent;
  private final Function<Call, CallContext> contexts;
  private final ArgumentValidator validator;
  private final CallLimiter limiter;
  private final SessionWatches sessionWatches;
  private final Map<String, JsonObject> extensionTools = new LinkedHashMap<>();
  private final Map<String, McpExtension> extensionToolOwners = new LinkedHashMap<>();
  private final Map<String, JsonObject> inputSchemas;
  private final Grants grants;
  private final Tasks tasks;
  private final dev.tidemark.runtime.NamedCatalogs named;
  /** The argument check of each named tool, by its fingerprint: a reload that changes a tool makes a new one (see namedValidator). */
  private final Map<String, ArgumentValidator> namedValidators = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * @param sessionWatches the node's count of each session's waiting watches (watch.max-waiting-per-session)
   * @param tasks the node's tasks, where a call that waits goes on as a task for a client that declared the extension
   */
  public ToolMethods(Vertx vertx, CallLimiter limiter, SessionWatches sessionWatches, List<McpExtension> extensions, ServiceClient services,
      Consent consent, Function<Call, CallContext> contexts, Grants grants, Tasks tasks) {
    this.vertx = vertx;
    this.tasks = tasks;
    this.grants = grants;
    this.limiter = limiter;
    this.sessionWatches = sessionWatches;
    this.services = services;
    this.consent = consent;
    this.contexts = contexts;
    Map<String, JsonObject> schemas = new LinkedHashMap<>();
    for (ToolDescriptor tool : ToolCatalog.all()) {
      schemas.put(tool.name(), tool.inputSchema());
    }
    for (McpExtension extension : extensions) {
      for (JsonObject tool : extension.tools()) {
        extensionTools.put(tool.getString("name"), tool);
        extensionToolOwners.put(tool.getString("name"), extension);
        schemas.put(tool.getString("name"), tool.getJsonObject("inputSchema"));
      }
    }
    this.validator = new ArgumentValidator(schemas);
    this.inputSchemas = Map.copyOf(schemas);
    this.named = dev.tidemark.runtime.NamedCatalogs.of(vertx);
  }

  /** The input schema of every tool, the catalogue's and the extensions', by name. */
  public Map<String, JsonObject> inputSchemas() {
    return inputSchemas;
  }

  /**
   * What a call of the tool named {@code name} may send its client before its result. A catalogue
   * tool's service only replies; what reaches the client mid-call is what {@link #callService} and
   * {@link Consent} send, so only a change may ask. An extension may send anything.
   */
  public Eras.Voice voice(Object name) {
    if (name instanceof String s && extensionToolOwners.containsKey(s)) {
      return Eras.Voice.ANY;
    }
    if (name instanceof String s && ToolCatalog.find(s).isEmpty() && namedChange(s)) {
      return Eras.Voice.CHANGE;
    }
    return name instanceof String s && ToolCatalog.find(s).map(t -> t.service() == Service.COMMAND).orElse(false)
        ? Eras.Voice.CHANGE : Eras.Voice.READ;
  }

  /** The names of every tool, the catalogue's and the extensions'. */
  public static List<String> names(List<McpExtension> extensions) {
    List<String> names = new java.util.ArrayList<>(ToolCatalog.all().stream().map(ToolDescriptor::name).toList());
    extensions.forEach(e -> e.tools().forEach(t -> names.add(t.getString("name"))));
    return names;
  }

  /** Whether a tool of that name is a named change tool of any database (a call names its tool before its database is looked at). */
  private boolean namedChange(String name) {
    return named.anyTool(name).map(t -> t.kind() == NamedTool.Kind.CHANGE).orElse(false);
  }

  private boolean mayCall(Call call, String tool) {
    return verdict(call, tool) == Grants.Verdict.CALL;
  }

  /**
   * What the caller may do with {@code tool} on this call's path: a named tool of the call's
   * database by its own roles, a built-in one by the role's ceiling; on a toolset's path only the
   * toolset's tools exist.
   */
  private Grants.Verdict verdict(Call call, String tool) {
    if (call.toolset() != null) {
      List<String> members = named.get(call.database()).toolset(call.toolset());
      if (members == null || !members.contains(tool)) {
        return Grants.Verdict.UNKNOWN;
      }
    }
    NamedTool definition = named.get(call.database()).tool(tool);
    return definition != null ? grants.verdict(call.caller(), definition) : grants.verdict(call.caller(), tool);
  }

  /** Only what the caller may call now: not what its ceiling or a read-only token hides, nor what its scopes do not cover yet. */
  public Future<JsonObject> list(Call call) {
    JsonArray tools = new JsonArray();
    for (ToolDescriptor tool : ToolCatalog.all()) {
      if (mayCall(call, tool.name())) {
        tools.add(tool.toMcp());
      }
    }
    extensionTools.values().stream().filter(t -> mayCall(call, t.getString("name"))).forEach(t -> tools.add(t.copy()));
    for (NamedTool tool : named.get(call.database()).tools()) {
      if (mayCall(call, tool.name())) {
        tools.add(tool.descriptor().toMcp());
      }
    }
    return Future.succeededFuture(MethodTable.cacheable(call, new JsonObject().put("tools", tools), 60_000, "private"));
  }

  public Future<JsonObject> call(Call call) {
    Object name = call.params().getValue("name");
    Object rawArgs = call.params().getValue("arguments");
    if (rawArgs != null && !(rawArgs instanceof JsonObject)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "The arguments of tools/call must be an object."));
    }
    JsonObject arguments = rawArgs == null ? new JsonObject() : (JsonObject) rawArgs;
    // outside the ceiling, or a change tool for a read-only token: exactly as a tool that does not exist
    Grants.Verdict verdict = name instanceof String s ? verdict(call, s) : Grants.Verdict.UNKNOWN;
    NamedTool definition = name instanceof String s && verdict != Grants.Verdict.UNKNOWN ? named.get(call.database()).tool(s) : null;
    ToolDescriptor tool = definition != null ? definition.descriptor()
        : name instanceof String s && verdict != Grants.Verdict.UNKNOWN ? ToolCatalog.find(s).orElse(null) : null;
    McpExtension extension = name instanceof String s && verdict != Grants.Verdict.UNKNOWN && definition == null
        ? extensionToolOwners.get(s) : null;
    if (tool == null && extension == null) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "Unknown tool; call tools/list to see the tools you may call."));
    }
    if (verdict == Grants.Verdict.NEEDS_SCOPE) {
      // ScopeGate answered this with a 403 before the call began; a call that got here anyway still does not run
      String scope = definition == null ? Grants.scopeOf((String) name) : definition.kind() == NamedTool.Kind.CHANGE
          ? dev.tidemark.config.TidemarkConfig.OAuthConfig.WRITE_SCOPE : dev.tidemark.config.TidemarkConfig.OAuthConfig.READ_SCOPE;
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_REQUEST, "The access token's scopes do not cover " + name
          + "; get a token with scope " + scope + ".", 403, null));
    }
    String toolName = (String) name;
    if (extension != null && !Tasks.declared(call) && "required".equals(extensionTools.get(toolName)
        .getJsonObject("execution", new JsonObject()).getValue("taskSupport"))) {
      // it can only answer with a task, which this client cannot take
      return Future.failedFuture(Tasks.missingExtension(call, "tools/call of " + toolName));
    }
    JsonArray faults = definition == null ? validator.faults(toolName, arguments) : namedValidator(call, definition).faults(toolName, arguments);
    if (!faults.isEmpty()) {
      ToolException invalid = new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "The arguments do not fit the inputSchema of " + toolName + " (" + faults.size()
              + (faults.size() == 1 ? " fault" : " faults") + "): " + ArgumentValidator.describe(faults) + " "
              + ErrorCode.INVALID_ARGUMENTS.hint(),
          new JsonObject().put("faults", faults));
      return Future.succeededFuture(ResultRenderer.render(toolName, ToolReply.failed(invalid)));
    }
    Runnable watchEnds;
    try {
      watchEnds = waits(toolName, arguments) && call.sessionId() != null ? sessionWatches.enter(call.sessionId()) : () -> { };
    } catch (ToolException e) {
      return Future.succeededFuture(ResultRenderer.render(toolName, ToolReply.failed(e)));
    }
    // arguments are checked first: a call that cannot run never waits for a slot
    return limiter.admit(call.caller().id(), call.cancellation()).compose(admission -> admission.refused()
        ? Future.succeededFuture(ResultRenderer.render(toolName, ToolReply.failed(admission.refusal())))
        : run(call, toolName, tool, definition, extension, arguments).eventually(() -> {
          admission.release().run();
          return Future.succeededFuture();
        })).eventually(() -> {
          watchEnds.run();
          return Future.succeededFuture();
        });
  }

  /**
   * The argument check of a named tool as defined now. Reloads make new definitions and leave old
   * checks behind; once there are more than the database's tools could need, they are all dropped
   * and remade as called, so the cache stays bounded by the configuration.
   */
  private ArgumentValidator namedValidator(Call call, NamedTool definition) {
    if (namedValidators.size() > 2 * named.get(call.database()).tools().size() + 16) {
      namedValidators.clear();
    }
    return namedValidators.computeIfAbsent(definition.fingerprint(),
        fp -> new ArgumentValidator(Map.of(definition.name(), definition.descriptor().inputSchema())));
  }

  /** A watch that long-polls: it holds a slot of its caller for as long as it waits. */
  private static boolean waits(String tool, JsonObject arguments) {
    return ToolCatalog.WATCH.equals(tool) && arguments.getValue("wait_ms") instanceof Number n && n.longValue() > 0;
  }

  private Future<JsonObject> run(Call call, String toolName, ToolDescriptor tool, NamedTool definition, McpExtension extension,
      JsonObject arguments) {
    if (extension != null) {
      CallContext context = contexts.apply(call);
      return extension.callTool(toolName, arguments, context)
          .recover(err -> err instanceof InputRequired ? Future.succeededFuture(context.inputRequired())
              : err instanceof RpcFailure ? Future.failedFuture(err)
              : Future.succeededFuture(new JsonObject().put("isError", true).put("content", new JsonArray()
                  .add(new JsonObject().put("type", "text").put("text", toolName + " failed: " + err.getMessage())))));
    }
    return callService(call, tool, definition, arguments);
  }

  /** The request of {@code call} to run {@code tool} with {@code arguments}; a named tool's carries its definition. */
  private static ToolRequest request(Call call, ToolDescriptor tool, NamedTool definition, JsonObject arguments) {
    ToolRequest request = ServiceClient.request(call, tool.name(), arguments);
    return definition == null ? request : request.withNamed(definition);
  }

  private Future<JsonObject> callService(Call call, ToolDescriptor tool, NamedTool definition, JsonObject arguments) {
    ToolRequest request = request(call, tool, definition, arguments);
    LogContext.put(LogContext.REQUEST_ID, request.requestId());
    call.cancellation().onCancel(() -> vertx.eventBus().publish(Addresses.cancel(call.database()),
        new JsonObject().put("request_id", request.requestId())));
    CallContext context = contexts.apply(call);
    context.log("debug", "calling " + tool.name() + " on the " + tool.service().name().toLowerCase(Locale.ROOT) + " service");
    long started = System.nanoTime();
    long heartbeat = call.progressToken() == null || !call.channel().streaming() ? -1
        : vertx.setPeriodic(PROGRESS_INTERVAL_MS, t -> {
          long seconds = (System.nanoTime() - started) / 1_000_000_000L;
          context.progress(seconds, null, tool.name() + " has run for " + seconds + " s");
        });
    Function<ToolReply, JsonObject> render = reply -> {
      if (reply.isError()) {
        context.log("warning", tool.name() + " failed: " + reply.error().getString("code"));
      }
      return ResultRenderer.render(tool.name(), reply);
    };
    Future<ToolReply> reply = services.send(tool, request);
    Function<ToolReply, Future<JsonObject>> answer = r -> Consent.needed(tool, arguments, r)
        ? consent.ask(call, tool, arguments, r, context, render, args -> request(call, tool, definition, args))
        : Future.succeededFuture(render.apply(r));
    Future<JsonObject> result = tasks != null && tasks.promotes(call, tool.name(), arguments)
        ? tasks.whenSlow(call, tool.name(), request.requestId(), reply, answer, render)
        : reply.compose(answer);
    return result
        // a commit that became a proposal waits for a person: a client that takes tasks gets one that follows it
        .compose(r -> tasks != null && tool.service() == Service.COMMAND ? tasks.followProposal(call, tool.name(), r) : Future.succeededFuture(r))
        .eventually(() -> {
          vertx.cancelTimer(heartbeat);
          return Future.succeededFuture();
        });
  }
}
