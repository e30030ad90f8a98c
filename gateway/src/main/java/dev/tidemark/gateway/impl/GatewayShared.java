package dev.tidemark.gateway.impl;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.runtime.NamedCatalogs;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.gateway.GatewayActivity;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Drain;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.call.RequestStates;
import dev.tidemark.gateway.impl.call.ServerRequests;
import dev.tidemark.gateway.impl.http.Authentication;
import dev.tidemark.gateway.impl.http.Challenges;
import dev.tidemark.gateway.impl.http.ConnectionSlots;
import dev.tidemark.gateway.impl.http.RateLimit;
import dev.tidemark.gateway.impl.method.ServerInfo;
import dev.tidemark.gateway.impl.resource.ChangeNotifier;
import dev.tidemark.gateway.impl.resource.SubscriptionHolders;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.service.ServiceClient;
import dev.tidemark.gateway.impl.session.EventLog;
import dev.tidemark.gateway.impl.session.Revocations;
import dev.tidemark.gateway.impl.session.SessionStore;
import dev.tidemark.gateway.impl.task.Tasks;
import dev.tidemark.gateway.impl.tool.CallLimiter;
import dev.tidemark.gateway.impl.tool.SessionWatches;
import dev.tidemark.gateway.impl.service.Grants;
import dev.tidemark.gateway.impl.tool.ToolMethods;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * What every gateway instance of a node shares, built once per node: a node runs one instance of
 * the endpoint per event loop ({@link McpEndpoint}), and what a limit counts, what a drain or a
 * revocation must reach, and what hears the cluster must be the node's, not one per loop. So the
 * tasks (their state is in PostgreSQL; how many each caller runs is counted per node), the
 * connection slots and failed-credential counts ({@link Authentication}), the per-caller call
 * limiter, the calls and streams in flight, the session copies, the subscriptions and the change
 * claims, the revocations heard, the drain and the client of the services are here, each safe to
 * use from any loop (see each class). Its consumers and timers (cancellations, sessions changed,
 * subscriptions heard, changes to notify, members that left, revocations, reloads of the named
 * tools, the gauges) run once, on the context that calls {@link #start}: the node's gateway part,
 * never an instance's.
 */
public final class GatewayShared {

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final List<McpExtension> extensions;
  private final ConnectionSlots slots;
  private final Revocations revocations = new Revocations();
  private final SessionStore sessions;
  private final EventLog events;
  private final Subscriptions subscriptions;
  private final InFlight inFlight;
  /** One per served database: each hears its own database's changes. */
  private final List<ChangeNotifier> notifiers;
  private final Challenges challenges;
  private final Authentication authentication;
  private final RateLimit rateLimit;
  private final ServerRequests serverRequests;
  private final RequestStates requestStates;
  private final SubscriptionHolders holders;
  private final Grants grants;
  private final ServiceClient services;
  private final CallLimiter limiter;
  private final SessionWatches sessionWatches;
  private final ServerInfo info;
  private final GatewayActivity activity;
  private final Tasks tasks;
  private final Drain drain = new Drain();
  /** Stops hearing of reloads of the named tools. */
  private Runnable unlisten = () -> {};

  /**
   * @param authenticator null only when {@code auth.enabled} is false (a local test node)
   * @param extensions extra tools, resources and prompts; production passes none
   * @param activity where every instance counts each caller's calls, errors and refusals for the console
   */
  public GatewayShared(Vertx vertx, NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions,
      GatewayActivity activity) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.authenticator = authenticator;
    this.extensions = List.copyOf(extensions);
    this.slots = new ConnectionSlots(config.http().maxConnections(), config.http().maxUnauthenticatedConnections());
    this.sessions = new SessionStore(vertx, revocations);
    this.events = new EventLog(vertx);
    this.subscriptions = new Subscriptions(vertx, events);
    this.inFlight = new InFlight(vertx, revocations);
    this.notifiers = config.databaseNames().stream().map(db -> new ChangeNotifier(vertx, db, node.nodeId(), subscriptions)).toList();
    this.challenges = new Challenges(config);
    this.authentication = new Authentication(vertx, authenticator, slots, revocations, config.anonymousRole(), challenges);
    this.rateLimit = new RateLimit(vertx, config.callLimits());
    this.serverRequests = new ServerRequests(vertx);
    this.holders = new SubscriptionHolders(vertx, config.subscriptionLimits(),
        id -> sessions.get(id).map(session -> session != null), subscriptions::removeAll);
    this.requestStates = new RequestStates(vertx);
    this.grants = new Grants(config.roleTools(), ToolMethods.names(extensions), config.command().migrateRoles());
    this.services = new ServiceClient(vertx, config.busSendTimeoutMs(), grants);
    this.limiter = new CallLimiter(vertx, config.callLimits());
    this.sessionWatches = new SessionWatches(config.watch().maxWaitingPerSession());
    this.info = new ServerInfo(node);
    this.activity = activity;
    // the streams are the node's, held in one place for every instance: read once, not once per instance
    activity.streamsFrom(inFlight::streamsByCaller);
    this.tasks = new Tasks(vertx, config.tasks(), config.callLimits().maxConcurrent(), inFlight, services);
  }

  /** Starts what runs once per node, on the calling context. */
  public Future<Void> start() {
    GatewayMeters.watch(vertx, inFlight);
    // a reload that changed what a database serves: every session that receives list changes hears of it, once per node
    unlisten = NamedCatalogs.of(vertx).listen(subscriptions::toolsListChanged);
    return inFlight.start().compose(v -> services.start()).compose(v -> sessions.start()).compose(v -> subscriptions.start())
        .compose(v -> Future.all(notifiers.stream().map(ChangeNotifier::start).toList())).compose(v -> requestStates.start())
        .compose(v -> authenticator == null ? Future.succeededFuture() : authenticator.start(inFlight::revoked));
  }

  /**
   * Stops what {@link #start} started, first ending the tasks that run here as lost; the instances
   * end their own streams as they stop.
   */
  public Future<Void> stop() {
    unlisten.run();
    return tasks.stop().compose(v -> authenticator == null ? Future.<Void>succeededFuture() : authenticator.stop())
        .compose(v -> Future.all(notifiers.stream().map(ChangeNotifier::stop).toList())).compose(v -> subscriptions.stop())
        .compose(v -> sessions.stop()).compose(v -> services.stop()).compose(v -> inFlight.stop());
  }

  /**
   * Stops every instance from taking new requests, ends the open streams of every instance with a
   * hint to reconnect elsewhere, and waits up to {@code timeoutMillis} for the calls in flight on
   * any of them; those still running then are cancelled and answered with a retriable error.
   * Completes with how many calls were cut.
   */
  public Future<Integer> drain(long timeoutMillis) {
    drain.begin();
    inFlight.drainStreams();
    return inFlight.callsDone(timeoutMillis).map(v -> inFlight.endForDrain());
  }

  Vertx vertx() {
    return vertx;
  }

  NodeInfo node() {
    return node;
  }

  TidemarkConfig config() {
    return config;
  }

  List<McpExtension> extensions() {
    return extensions;
  }

  ConnectionSlots slots() {
    return slots;
  }

  SessionStore sessions() {
    return sessions;
  }

  EventLog events() {
    return events;
  }

  Subscriptions subscriptions() {
    return subscriptions;
  }

  InFlight inFlight() {
    return inFlight;
  }

  Challenges challenges() {
    return challenges;
  }

  Authentication authentication() {
    return authentication;
  }

  RateLimit rateLimit() {
    return rateLimit;
  }

  ServerRequests serverRequests() {
    return serverRequests;
  }

  RequestStates requestStates() {
    return requestStates;
  }

  SubscriptionHolders holders() {
    return holders;
  }

  Grants grants() {
    return grants;
  }

  ServiceClient services() {
    return services;
  }

  SessionWatches sessionWatches() {
    return sessionWatches;
  }

  CallLimiter limiter() {
    return limiter;
  }

  ServerInfo info() {
    return info;
  }

  GatewayActivity activity() {
    return activity;
  }

  Tasks tasks() {
    return tasks;
  }

  Drain drainState() {
    return drain;
  }
}
