package dev.tidemark.gateway.impl;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.runtime.NamedCatalogs;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.telemetry.tracing.Traces;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.CallContext;
import dev.tidemark.gateway.impl.call.Drain;
import dev.tidemark.gateway.impl.call.RequestStates;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.call.ServerRequests;
import dev.tidemark.gateway.impl.completion.Completion;
import dev.tidemark.gateway.impl.consent.Consent;
import dev.tidemark.gateway.impl.call.Eras;
import dev.tidemark.gateway.impl.era.LegacyEra;
import dev.tidemark.gateway.impl.era.ModernEra;
import dev.tidemark.gateway.impl.era.ParamHeaders;
import dev.tidemark.gateway.impl.era.SessionLifecycle;
import dev.tidemark.gateway.impl.era.Turn;
import dev.tidemark.gateway.impl.http.Answer;
import dev.tidemark.gateway.impl.http.AnswerWriter;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.http.Authentication;
import dev.tidemark.gateway.impl.http.BodyReader;
import dev.tidemark.gateway.impl.http.Challenges;
import dev.tidemark.gateway.impl.http.ConnectionSlots;
import dev.tidemark.gateway.impl.http.RateLimit;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.http.RequestGuards;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import dev.tidemark.gateway.impl.method.CallRunner;
import dev.tidemark.gateway.impl.method.MethodTable;
import dev.tidemark.gateway.impl.method.ScopeGate;
import dev.tidemark.gateway.impl.method.ServerInfo;
import dev.tidemark.gateway.impl.prompt.PromptMethods;
import dev.tidemark.gateway.impl.resource.ResourceMethods;
import dev.tidemark.gateway.impl.resource.SubscriptionHolders;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.session.EventLog;
import dev.tidemark.gateway.impl.session.SessionStore;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import dev.tidemark.gateway.impl.call.Channels;
import dev.tidemark.gateway.impl.stream.GetStream;
import dev.tidemark.gateway.impl.stream.ListenStream;
import dev.tidemark.gateway.impl.call.ResponseChannel;
import dev.tidemark.gateway.impl.task.Tasks;
import dev.tidemark.gateway.impl.service.Grants;
import dev.tidemark.gateway.impl.tool.ToolMethods;
import io.micrometer.core.instrument.Counter;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.function.Function;

/**
 * The Streamable HTTP MCP endpoint, for both eras on one path: it wires the gateway's parts and
 * routes each request through them. A request passes the guards and the credential check before
 * its body is read; the JSON-RPC envelope then decides the era, the era turns the request into a
 * call (or answers it itself), and the call runs through the method table. Every step fails with
 * a {@link Refusal}, which {@link AnswerWriter#refuse} alone writes.
 *
 * <p>One per gateway instance, and a node runs one instance per event loop: an endpoint holds only
 * what its own loop uses (its routes and the handlers that serve them), and takes what every loop
 * must share from the node's {@link GatewayShared}.
 */
public final class McpEndpoint {

  private final Vertx vertx;
  /** The node's named tools, looked up once: every tool call reads them. */
  private final NamedCatalogs namedCatalogs;
  private final TidemarkConfig config;
  private final SessionStore sessions;
  private final EventLog events;
  private final InFlight inFlight;
  private final Subscriptions subscriptions;
  private final RequestGuards guards;
  private final Authentication authentication;
  private final BodyReader bodies;
  private final AnswerWriter answers;
  private final RateLimit rateLimit;
  private final ServerRequests serverRequests;
  private final LegacyEra legacy;
  private final ModernEra modern;
  private final RequestStates requestStates;
  private final SessionLifecycle lifecycle;
  private final GetStream getStreams;
  private final ListenStream listenStreams;
  private final CallRunner runner;
  private final Challenges challenges;
  private final ScopeGate scopes;
  private final Drain drain;
  private final ServiceClient services;
  private final ConnectionSlots slots;
  /** The connections this instance took, counted under its event loop. */
  private final Counter connections;
  private final dev.tidemark.gateway.GatewayActivity activity;

  /** Call on the instance's own context: its meters are its event loop's. */
  public McpEndpoint(GatewayShared shared) {
    Vertx vertx = shared.vertx();
    TidemarkConfig config = shared.config();
    List<McpExtension> extensions = shared.extensions();
    this.activity = shared.activity();
    this.vertx = vertx;
    this.namedCatalogs = NamedCatalogs.of(vertx);
    this.config = config;
    this.sessions = shared.sessions();
    this.events = shared.events();
    this.subscriptions = shared.subscriptions();
    this.inFlight = shared.inFlight();
    this.drain = shared.drainState();
    this.slots = shared.slots();
    this.connections = GatewayMeters.connections(vertx);
    this.guards = new RequestGuards(config);
    this.challenges = shared.challenges();
    this.authentication = shared.authentication();
    this.bodies = new BodyReader(vertx, config.http().maxBodyBytes(), config.http().bodyTimeoutMs());
    this.answers = new AnswerWriter(vertx, slots);
    this.rateLimit = shared.rateLimit();
    this.serverRequests = shared.serverRequests();
    ServerInfo info = shared.info();
    SubscriptionHolders holders = shared.holders();
    this.lifecycle = new SessionLifecycle(vertx, sessions, events, subscriptions, holders);

    this.requestStates = shared.requestStates();
    Grants grants = shared.grants();
    this.scopes = new ScopeGate(grants, challenges, namedCatalogs);
    this.services = shared.services();
    // the node's tasks: any instance, and any gateway of the cluster, answers for any task
    Tasks tasks = shared.tasks();
    Function<Call, CallContext> contexts = call -> new CallContext(call, serverRequests, requestStates,
        uri -> subscriptions.resourceUpdated(call.database(), uri), tasks);
    // the limiter is the node's: a caller's cap holds across every instance
    ToolMethods tools = new ToolMethods(vertx, shared.limiter(), shared.sessionWatches(), extensions, services,
        new Consent(services, serverRequests), contexts, grants, tasks);
    this.modern = new ModernEra(new ParamHeaders(tools.inputSchemas()));
    this.legacy = new LegacyEra(vertx, sessions, info, tools::voice);
    ResourceMethods resources = new ResourceMethods(extensions, services, subscriptions, holders);
    PromptMethods prompts = new PromptMethods(extensions, contexts);
    MethodTable table = new MethodTable()
        // a requestState that this cluster did not issue for this very request stops it before it runs
        .checkingModern(requestStates::fault)
        .both(McpMethods.TOOLS_LIST, tools::list)
        // counted here, once, so the tools' own code knows nothing of metrics
        .both(McpMethods.TOOLS_CALL, call -> Meters.of(vertx).toolCalls().record(call.params().getValue("name"), () -> tools.call(call))
            .andThen(ar -> counted(call, ar.succeeded() ? ar.result() : null)))
        .both(McpMethods.RESOURCES_LIST, resources::list)
        .both(McpMethods.RESOURCES_TEMPLATES_LIST, resources::templates)
        .both(McpMethods.RESOURCES_READ, resources::read)
        .both(McpMethods.PROMPTS_LIST, prompts::list)
        .both(McpMethods.PROMPTS_GET, prompts::get)
        .both(McpMethods.COMPLETION_COMPLETE, new Completion(services)::complete)
        .legacyOnly(McpMethods.PING, call -> Future.succeededFuture(new JsonObject()))
        .legacyOnly(McpMethods.LOGGING_SET_LEVEL, lifecycle::setLevel)
        .legacyOnly(McpMethods.RESOURCES_SUBSCRIBE, call -> resources.subscribe(call, true))
        .legacyOnly(McpMethods.RESOURCES_UNSUBSCRIBE, call -> resources.subscribe(call, false))
        .modernOnly(McpMethods.SERVER_DISCOVER, call -> Future.succeededFuture(info.discover(call.database())))
        // the tasks extension, for a client that declared it: any gateway answers for any task
        .both(McpMethods.TASKS_GET, tasks::get)
        .both(McpMethods.TASKS_UPDATE, tasks::update)
        .both(McpMethods.TASKS_CANCEL, tasks::cancel);
    this.runner = new CallRunner(table, inFlight, info, Traces.tracer(vertx));
    this.getStreams = new GetStream(vertx, events, subscriptions, inFlight);
    this.listenStreams = new ListenStream(vertx, subscriptions, holders, inFlight, resources::canonical);
  }

  /** A call's end as the console shows it: its tool, and its error code or a queue refusal; a JSON-RPC error counts as protocol_error. */
  private void counted(Call call, JsonObject result) {
    Object name = call.params().getValue("name");
    // a tool the team defined is named too: the configuration bounds them, where /metrics labels bound only the catalog's
    String tool = name instanceof String s && namedCatalogs.get(call.database()).tool(s) != null ? s
        : dev.tidemark.telemetry.metrics.ToolCallMeters.toolLabel(name);
    String outcome = result == null ? dev.tidemark.telemetry.metrics.ToolCallMeters.PROTOCOL_ERROR
        : dev.tidemark.telemetry.metrics.ToolCallMeters.outcome(result);
    activity.call(call.caller().id(), call.caller().name(), tool, outcome);
    if (result != null && result.getValue("structuredContent") instanceof JsonObject sc && sc.getValue("error") instanceof JsonObject e
        && dev.tidemark.contract.WaitedFor.QUEUE.in(e)) {
      activity.refused(call.caller().id(), call.caller().name(), "queue");
    }
  }

  /** Declares this instance's routes; what runs once per node started with {@link GatewayShared#start}. */
  public Future<Void> start(Router router) {
    String path = config.http().path();
    if (challenges.oauth()) {
      // RFC 9728's path-suffixed form: one document per endpoint, each naming its own resource
      router.get(Challenges.METADATA_PREFIX + path).handler(ctx -> metadata(ctx, null));
      router.get(Challenges.METADATA_PREFIX + path + "/:database").handler(ctx -> metadata(ctx, ctx.pathParam("database")));
    }
    for (String p : List.of(path, path + "/:database", path + "/:database/:toolset")) {
      router.post(p).handler(this::post);
      router.get(p).handler(this::get);
      router.delete(p).handler(this::delete);
      router.route(p).handler(ctx -> ctx.response().setStatusCode(405).putHeader(HttpHeaders.ALLOW, "GET, POST, DELETE").end());
    }
    router.route().last().handler(ctx -> answers.refuse(ctx, Refusal.http(404, "Nothing is served at this path; the MCP endpoint is " + path + ".")));
    return Future.succeededFuture();
  }

  /**
   * Ends this instance's open streams gracefully (listen streams get their completion result, then
   * every stream closes); the other instances' streams go on until their own stop.
   */
  public Future<Void> stop(Context instance) {
    inFlight.stopStreamsOf(instance);
    return Future.succeededFuture();
  }

  /** A new connection of this instance: it waits for a slot among the node's unauthenticated ones. */
  public void opened(HttpConnection connection) {
    connections.increment();
    slots.opened(connection);
  }

  /** The protected-resource metadata of one endpoint: public, since a client reads it before it has a token. */
  private void metadata(RoutingContext ctx, String databaseInPath) {
    try {
      guards.database(databaseInPath);
    } catch (Refusal r) {
      answers.refuse(ctx, r);
      return;
    }
    ctx.response().putHeader(HttpHeaders.CACHE_CONTROL, "max-age=3600");
    answers.write(ctx, Answer.json(200, challenges.metadata(databaseInPath)));
  }

  /** The guards, then the credential check: what every method of the endpoint passes first. */
  private Future<Authenticated> admit(RoutingContext ctx) {
    try {
      String database = guards.check(ctx.request().headers(), ctx.pathParam("database"));
      if (ctx.request().method() == HttpMethod.POST) {
        RequestGuards.requireJson(ctx.request().getHeader(HttpHeaders.CONTENT_TYPE));
      }
      String toolset = toolset(database, ctx.pathParam("toolset"));
      return authentication.check(ctx.request(), database, ctx.pathParam("database")).map(who -> who.withToolset(toolset));
    } catch (Refusal r) {
      return r.future();
    }
  }

  /**
   * The toolset a path names, which its database serves; an unknown one is a 404 that lists the
   * toolsets (never the name sent). A toolset narrows what a client sees; the token decides what it may call.
   */
  private String toolset(String database, String toolsetInPath) {
    if (toolsetInPath == null) {
      return null;
    }
    NamedCatalog catalog = namedCatalogs.get(database);
    if (catalog.toolset(toolsetInPath) == null) {
      String path = config.http().path() + "/" + database + "/";
      throw Refusal.http(404, "No toolset is served at this path; " + (catalog.toolsets().isEmpty() ? "database " + database
          + " serves none." : "the toolsets are " + String.join(", ", catalog.toolsets().stream().sorted().map(t -> path + t).toList()) + "."));
    }
    return toolsetInPath;
  }

  private void post(RoutingContext ctx) {
    ctx.request().pause();
    admit(ctx).compose(who -> bodies.read(ctx.request()).compose(body -> turn(ctx, who, body)))
        // a token's scopes are checked on the call itself, before its channel writes anything, so a 403 can still be sent
        .compose(turn -> turn instanceof Turn.Run r ? scopes.check(r.call(), ctx.pathParam("database")).map(turn) : Future.succeededFuture(turn))
        // counted after the scopes, so that a call refused for them spends nothing of the budget
        .compose(turn -> turn instanceof Turn.Run r && McpMethods.TOOLS_CALL.equals(r.call().method())
            ? rateLimit.take(r.call().caller().id(), r.call().id())
                .onFailure(err -> activity.refused(r.call().caller().id(), r.call().caller().name(), "rate_limit")).map(turn)
            : Future.succeededFuture(turn))
        .map(turn -> {
          if (turn instanceof Turn.Answered a) {
            answers.write(ctx, a.answer());
          } else if (turn instanceof Turn.Run r) {
            run(r.call(), ctx.request().getHeader(HttpHeaders.USER_AGENT));
          }
          return null;
        })
        .onFailure(err -> answers.refuse(ctx, err));
  }

  private Future<Turn> turn(RoutingContext ctx, Authenticated who, Buffer body) {
    Envelope env = Envelope.parse(body);
    if (drain.draining() && env.hasId() && !env.isResponse()) {
      // a new request; what continues a running call (an answer, a cancellation) is still taken
      return Drain.refusal(env.id()).future();
    }
    if (env.isResponse()) {
      serverRequests.deliver(env.message()); // an answer to a request this server sent, possibly from another node
      return Future.succeededFuture(new Turn.Answered(Answer.accepted()));
    }
    MultiMap headers = ctx.request().headers();
    Channels channels = channels(ctx);
    return Eras.modern(env.meta(), headers.get(McpHeaders.VERSION))
        ? Future.succeededFuture(modern.turn(headers, who, env, channels))
        : legacy.turn(headers, who, env, channels);
  }

  private Channels channels(RoutingContext ctx) {
    return new Channels() {
      @Override
      public ResponseChannel json() {
        return ResponseChannel.json(ctx.response());
      }

      @Override
      public ResponseChannel sse(String sessionId) {
        return ResponseChannel.sse(ctx.response(), events, sessionId);
      }
    };
  }

  private void run(Call call, String userAgent) {
    if (call.modern() && McpMethods.SUBSCRIPTIONS_LISTEN.equals(call.method())) {
      listenStreams.open(call, ResponseChannel.openingOf(userAgent));
    } else {
      runner.run(call);
    }
  }

  /** GET: the session's stream of server messages. */
  private void get(RoutingContext ctx) {
    if (drain.draining()) {
      answers.refuse(ctx, Drain.refusal(null));
      return;
    }
    admit(ctx).compose(who -> lifecycle.streamOf(ctx.request().headers(), who)
            .compose(sessionId -> getStreams.open(ctx.response(), who, sessionId, ctx.request().getHeader(McpHeaders.LAST_EVENT_ID),
                ctx.request().getHeader(HttpHeaders.USER_AGENT), () -> lifecycle.end(sessionId, who.caller().id(), who.database()))))
        .onFailure(err -> answers.refuse(ctx, err));
  }

  private void delete(RoutingContext ctx) {
    admit(ctx).compose(who -> lifecycle.delete(ctx.request().headers(), who))
        .onSuccess(answer -> answers.write(ctx, answer))
        .onFailure(err -> answers.refuse(ctx, err));
  }
}
