package dev.tidemark.gateway.impl;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.contract.NamedCatalogs;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.metrics.Meters;
import dev.tidemark.contract.tracing.Traces;
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
import dev.tidemark.gateway.impl.era.Eras;
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
import dev.tidemark.gateway.impl.resource.ChangeNotifier;
import dev.tidemark.gateway.impl.resource.ResourceMethods;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.session.EventLog;
import dev.tidemark.gateway.impl.session.Revocations;
import dev.tidemark.gateway.impl.session.SessionStore;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import dev.tidemark.gateway.impl.stream.Channels;
import dev.tidemark.gateway.impl.stream.GetStream;
import dev.tidemark.gateway.impl.stream.ListenStream;
import dev.tidemark.gateway.impl.stream.ResponseChannel;
import dev.tidemark.gateway.impl.tool.CallLimiter;
import dev.tidemark.gateway.impl.tool.Grants;
import dev.tidemark.gateway.impl.tool.ToolMethods;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
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
 */
public final class McpEndpoint {

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final SessionStore sessions;
  private final EventLog events;
  private final InFlight inFlight;
  /** One per served database: each hears its own database's changes. */
  private final List<ChangeNotifier> notifiers;
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
  private final Drain drain = new Drain();
  /** Stops hearing of reloads of the named tools. */
  private Runnable unlisten = () -> {};

  public McpEndpoint(Vertx vertx, NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions,
      ConnectionSlots slots) {
    this.vertx = vertx;
    this.config = config;
    this.authenticator = authenticator;
    Revocations revocations = new Revocations();
    this.sessions = new SessionStore(vertx, revocations);
    this.events = new EventLog(vertx);
    this.subscriptions = new Subscriptions(vertx, events);
    this.inFlight = new InFlight(vertx, revocations);
    this.notifiers = config.databaseNames().stream().map(db -> new ChangeNotifier(vertx, db, node.nodeId(), subscriptions)).toList();
    this.guards = new RequestGuards(config);
    this.challenges = new Challenges(config);
    this.authentication = new Authentication(vertx, authenticator, slots, revocations, config.anonymousRole(), challenges);
    this.bodies = new BodyReader(vertx, config.http().maxBodyBytes(), config.http().bodyTimeoutMs());
    this.answers = new AnswerWriter(vertx, slots);
    this.rateLimit = new RateLimit(vertx, config.callLimits());
    this.serverRequests = new ServerRequests(vertx);
    ServerInfo info = new ServerInfo(node);
    this.lifecycle = new SessionLifecycle(vertx, sessions, events, subscriptions);

    this.requestStates = new RequestStates(vertx);
    Grants grants = new Grants(config.roleTools(), ToolMethods.names(extensions), config.command().migrateRoles());
    this.scopes = new ScopeGate(grants, challenges, NamedCatalogs.of(vertx));
    ServiceClient services = new ServiceClient(vertx, config.busSendTimeoutMs(), grants);
    Function<Call, CallContext> contexts = call -> new CallContext(call, serverRequests, requestStates,
        uri -> subscriptions.resourceUpdated(call.database(), uri));
    ToolMethods tools = new ToolMethods(vertx, new CallLimiter(vertx, config.callLimits()), extensions, services,
        new Consent(services, serverRequests), contexts, grants);
    this.modern = new ModernEra(new ParamHeaders(tools.inputSchemas()));
    this.legacy = new LegacyEra(vertx, sessions, info, tools::voice);
    ResourceMethods resources = new ResourceMethods(extensions, services, subscriptions);
    PromptMethods prompts = new PromptMethods(extensions, contexts);
    MethodTable table = new MethodTable()
        // a requestState that this cluster did not issue for this very request stops it before it runs
        .checkingModern(requestStates::fault)
        .both("tools/list", tools::list)
        // counted here, once, so the tools' own code knows nothing of metrics
        .both("tools/call", call -> Meters.of(vertx).toolCalls().record(call.params().getValue("name"), () -> tools.call(call)))
        .both("resources/list", resources::list)
        .both("resources/templates/list", resources::templates)
        .both("resources/read", resources::read)
        .both("prompts/list", prompts::list)
        .both("prompts/get", prompts::get)
        .both("completion/complete", new Completion(services)::complete)
        .legacyOnly("ping", call -> Future.succeededFuture(new JsonObject()))
        .legacyOnly("logging/setLevel", lifecycle::setLevel)
        .legacyOnly("resources/subscribe", call -> resources.subscribe(call, true))
        .legacyOnly("resources/unsubscribe", call -> resources.subscribe(call, false))
        .modernOnly("server/discover", call -> Future.succeededFuture(info.discover(call.database())));
    this.runner = new CallRunner(table, inFlight, info, Traces.tracer(vertx));
    this.getStreams = new GetStream(vertx, events, subscriptions, inFlight);
    this.listenStreams = new ListenStream(vertx, subscriptions, inFlight, resources::canonical);
  }

  public Future<Void> start(Router router) {
    GatewayMeters.watch(vertx, inFlight);
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
    // a reload that changed what a database serves: every session that receives list changes hears of it
    unlisten = NamedCatalogs.of(vertx).listen(database -> subscriptions.toolsListChanged(database));
    return inFlight.start().compose(v -> sessions.start()).compose(v -> subscriptions.start()).compose(v -> Future.all(notifiers.stream().map(ChangeNotifier::start).toList())).compose(v -> requestStates.start())
        .compose(v -> authenticator == null ? Future.succeededFuture() : authenticator.start(inFlight::revoked));
  }

  /** Ends open streams gracefully: listen streams get their completion result, then every stream closes. */
  public Future<Void> stop() {
    unlisten.run();
    inFlight.stopStreams();
    return (authenticator == null ? Future.<Void>succeededFuture() : authenticator.stop())
        .compose(v -> Future.all(notifiers.stream().map(ChangeNotifier::stop).toList())).compose(v -> subscriptions.stop())
        .compose(v -> sessions.stop()).compose(v -> inFlight.stop());
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

  /**
   * Stops taking new requests, ends open streams with a hint to reconnect elsewhere, and waits
   * up to {@code timeoutMillis} for the calls in flight; those still running then are cancelled
   * and answered with a retriable error. Completes with how many calls were cut.
   */
  public Future<Integer> drain(long timeoutMillis) {
    drain.begin();
    inFlight.drainStreams();
    return inFlight.callsDone(timeoutMillis).map(v -> inFlight.endForDrain());
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
    NamedCatalog catalog = NamedCatalogs.of(vertx).get(database);
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
        .compose(turn -> turn instanceof Turn.Run r && "tools/call".equals(r.call().method())
            ? rateLimit.take(r.call().caller().id(), r.call().id()).map(turn) : Future.succeededFuture(turn))
        .map(turn -> {
          if (turn instanceof Turn.Answered a) {
            answers.write(ctx, a.answer());
          } else if (turn instanceof Turn.Run r) {
            run(r.call());
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

  private void run(Call call) {
    if (call.modern() && ModernEra.LISTEN.equals(call.method())) {
      listenStreams.open(call);
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
                () -> lifecycle.end(sessionId, who.caller().id(), who.database()))))
        .onFailure(err -> answers.refuse(ctx, err));
  }

  private void delete(RoutingContext ctx) {
    admit(ctx).compose(who -> lifecycle.delete(ctx.request().headers(), who))
        .onSuccess(answer -> answers.write(ctx, answer))
        .onFailure(err -> answers.refuse(ctx, err));
  }
}
