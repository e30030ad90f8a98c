package dev.tidemark.node;

import dev.tidemark.database.Pools;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.OAuth;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.changelog.CaptureVerticle;
import dev.tidemark.changelog.RelayVerticle;
import dev.tidemark.changelog.TopicVerticle;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.command.CommandVerticle;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.Role;
import dev.tidemark.contract.Version;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.console.Console;
import dev.tidemark.gateway.GatewayActivity;
import dev.tidemark.gateway.GatewayNode;
import dev.tidemark.gateway.GatewayRoutes;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.database.toolserver.RunningRequests;
import dev.tidemark.node.cluster.ClusterSetup;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.node.logging.LogSetup;
import dev.tidemark.node.ops.EventLoopProbe;
import dev.tidemark.node.ops.NodeMetrics;
import dev.tidemark.node.ops.NodeTraces;
import dev.tidemark.telemetry.tracing.Traces;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import dev.tidemark.node.ops.OpsVerticle;
import dev.tidemark.node.ops.RelayLagProbe;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.DeploymentOptions;
import dev.tidemark.query.QueryVerticle;
import dev.tidemark.query.StalenessCheck;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.sqlclient.Pool;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running node: a clustered Vert.x instance with the verticles of the roles it was given,
 * and the operations endpoint every node serves.
 */
public final class TidemarkNode {

  private static final Logger LOG = LoggerFactory.getLogger(TidemarkNode.class);
  /** A readiness check that takes longer than this counts as down. */
  static final long CHECK_TIMEOUT_MILLIS = 3_000;

  private final TidemarkConfig config;
  private final ClusterSetup.Clustered cluster;
  private final NodeInfo info;
  private final GatewayNode gateway;
  private final OpsVerticle ops;
  private final OpenTelemetrySdk traces;
  private final NodeDrain drain;
  private final NodeDeployments deployed;

  private TidemarkNode(TidemarkConfig config, ClusterSetup.Clustered cluster, NodeInfo info, GatewayNode gateway, OpsVerticle ops,
      OpenTelemetrySdk traces, NodeDrain drain, NodeDeployments deployed) {
    this.config = config;
    this.cluster = cluster;
    this.info = info;
    this.gateway = gateway;
    this.ops = ops;
    this.traces = traces;
    this.drain = drain;
    this.deployed = deployed;
  }

  public static Future<TidemarkNode> start(TidemarkConfig config) {
    return start(config, List.of());
  }

  /** @param extensions extra MCP tools, resources and prompts for the gateway; production passes none */
  public static Future<TidemarkNode> start(TidemarkConfig config, List<McpExtension> extensions) {
    return startWith(config, vertx -> extensions);
  }

  /** Like {@link #start(TidemarkConfig, List)}, for extensions that need the node's Vert.x instance. */
  public static Future<TidemarkNode> startWith(TidemarkConfig config, java.util.function.Function<Vertx, List<McpExtension>> extensionsOf) {
    LogSetup.apply(config.log());
    String nodeId = config.nodeId().isEmpty() ? generatedNodeId() : config.nodeId();
    PrometheusMeterRegistry metrics = NodeMetrics.newRegistry();
    return ClusterSetup.start(config.cluster(), metrics).compose(cluster -> {
      Vertx vertx = cluster.vertx();
      Meters.install(vertx, metrics);
      OpenTelemetrySdk traces = NodeTraces.create(config.tracing(), nodeId, Version.get());
      Traces.install(vertx, NodeTraces.forCalls(traces, config.tracing()));
      Set<Role> roles = config.roles();
      NodeInfo info = new NodeInfo(nodeId, Version.get(), roles, cluster::size);
      boolean needsDatabase = roles.contains(Role.GATEWAY) || roles.contains(Role.QUERY) || roles.contains(Role.COMMAND)
          || roles.contains(Role.CHANGELOG);
      HealthChecks live = HealthChecks.create(vertx).register("event-loop", p -> p.complete(Status.OK()));
      HealthChecks ready = HealthChecks.create(vertx)
          .register("cluster", CHECK_TIMEOUT_MILLIS, clusterSafe(vertx, cluster));
      NodeDeployments deployed = new NodeDeployments(vertx);
      List<Future<String>> deployments = new ArrayList<>();
      if (roles.contains(Role.QUERY) || roles.contains(Role.COMMAND)) {
        deployments.add(RunningRequests.serve(vertx).map("running requests"));
      }
      List<java.util.function.LongFunction<Future<Integer>>> drains = new ArrayList<>();
      Pool defaultPool = null;
      java.util.Map<String, Pool> pools = new java.util.LinkedHashMap<>();
      List<McpExtension> extensions = roles.contains(Role.GATEWAY) ? extensionsOf.apply(vertx) : List.of();
      // no tool a team defines may take the name of a tool the gateway serves of its own
      Set<String> builtIns = new java.util.HashSet<>(dev.tidemark.contract.ToolCatalog.all().stream().map(t -> t.name()).toList());
      extensions.forEach(e -> e.tools().forEach(t -> builtIns.add(t.getString("name"))));
      // each database its own pools, services and changelog, each seeing only its own config
      for (String database : config.databaseNames()) {
        Pool pool = needsDatabase ? Pools.create(vertx, config.forDatabase(database).database()) : null;
        defaultPool = defaultPool == null ? pool : defaultPool;
        if (pool != null) {
          pools.put(database, pool);
        }
        deployDatabase(vertx, deployed, info, config.forDatabase(database), pool, ready, deployments, drains);
        if (pool != null && (roles.contains(Role.GATEWAY) || roles.contains(Role.QUERY))) {
          // the gateway serves the tools a team defined, and the query role reports them (status) and reads events' context with them
          deployments.add(deployed.deploy(new dev.tidemark.node.tools.NamedToolsLoader(config.forDatabase(database), pool,
              roles.contains(Role.QUERY), builtIns), database));
        }
      }
      GatewayNode gateway = null;
      if (roles.contains(Role.GATEWAY)) {
        // one token store for the cluster, in the default database; a token names the databases it may reach
        Authenticator tokens = config.authEnabled() ? TokenStore.create(defaultPool)
            .authenticator(vertx, Pools.connectOptions(config.defaultDatabase())) : null;
        // OAuth access tokens beside Tidemark's own; the gateway's start fetches the issuer's keys or fails
        Authenticator auth = tokens != null && config.oauth().enabled() ? OAuth.authenticator(vertx, config.oauth(), tokens) : tokens;
        GatewayActivity activity = new GatewayActivity();
        // the console for people, on the gateway's port at console.path, when it is enabled: started once, mounted by every instance
        List<GatewayRoutes> pages = config.console().enabled() ? List.of(new Console(vertx, info, config, pools, auth, activity)) : List.of();
        // the node-wide part first, then one endpoint per event loop over it, all on http.port
        GatewayNode node = new GatewayNode(info, config, auth, extensions, activity, pages);
        gateway = node;
        drains.add(node::drain);
        deployments.add(deployed.deploy(node, null).compose(x -> deployed.deploy(node::newInstance,
            new DeploymentOptions().setInstances(config.cluster().gatewayInstanceCount()), "GatewayVerticle")));
      }
      OpsVerticle ops = new OpsVerticle(config.ops(), live, ready, metrics);
      deployments.add(deployed.deploy(EventLoopProbe::new,
          new DeploymentOptions().setInstances(config.cluster().loops()), "EventLoopProbe"));
      GatewayNode gw = gateway;
      return Future.all(deployments)
          .compose(x -> deployed.deploy(ops, null))
          .map(x -> {
            LOG.info("node {} runs {} (cluster of {})", nodeId, roles, cluster.size());
            return new TidemarkNode(config, cluster, info, gw, ops, traces, new NodeDrain(nodeId, ready, drains), deployed);
          })
          .recover(err -> vertx.close().eventually(() -> NodeTraces.shutdown(traces)).transform(x -> Future.failedFuture(err)));
    });
  }

  /**
   * The verticles of one database that this node's roles run, deployed with {@code config}, that
   * database's view; readiness checks of a database other than the default carry its name.
   */
  private static void deployDatabase(Vertx vertx, NodeDeployments deployed, NodeInfo info, TidemarkConfig config, Pool pool, HealthChecks ready,
      List<Future<String>> deployments, List<java.util.function.LongFunction<Future<Integer>>> drains) {
    Set<Role> roles = config.roles();
    String db = config.database().name();
    // Tidemark's login on the database the changelog is stored in (database.changelog-url), or pool itself
    Pool changelog = pool == null ? null : Pools.changelog(vertx, config.database(), pool);
    String suffix = db.equals(config.defaultDatabase().name()) ? "" : "-" + db;
    if (pool != null) {
      // try*: a check past its timeout was already answered as down, and its late result is dropped
      ready.register("postgres" + suffix, CHECK_TIMEOUT_MILLIS, p -> pool.query("SELECT 1").execute()
          .onSuccess(rows -> p.tryComplete(Status.OK()))
          .onFailure(err -> p.tryComplete(Status.KO(new io.vertx.core.json.JsonObject().put("error", err.getMessage())))));
    }
    if (changelog != null && changelog != pool) {
      // the changelog's own database: changes_since, watches, restores and the relay's store need it
      java.util.concurrent.atomic.AtomicBoolean storeDown = new java.util.concurrent.atomic.AtomicBoolean();
      ready.register("changelog-store" + suffix, CHECK_TIMEOUT_MILLIS, p -> changelog.query("SELECT 1 FROM tidemark.changelog_state").execute()
          .onSuccess(rows -> {
            if (storeDown.compareAndSet(true, false)) {
              LOG.info("the changelog's database (database.changelog-url) of {} can be read again", db);
            }
            p.tryComplete(Status.OK());
          })
          .onFailure(err -> {
            // once when it goes down, not at every probe
            if (storeDown.compareAndSet(false, true)) {
              LOG.warn("the changelog's database (database.changelog-url) of {} cannot be read: {}", db, err.getMessage());
            }
            p.tryComplete(Status.KO(new io.vertx.core.json.JsonObject().put("error", err.getMessage())
                .put("database", "database.changelog-url")));
          }));
    }
    if (roles.contains(Role.QUERY)) {
      // one instance per event loop by default (each with its share of the caller pools): a read's
      // JVM work (binding, JSON, the reply) would otherwise all run on one loop
      perInstance(config, config.cluster().queryInstances(), (share, first) -> {
        QueryVerticle query = new QueryVerticle(info, share, pool, StalenessCheck.changelog(pool, changelog));
        drains.add(query::drain);
        deployments.add(deployed.deploy(query, db));
      });
      // the events tools run where reads do: an event is shown as the caller, as changes_since shows it
      deployments.add(deployed.deploy(new dev.tidemark.query.events.EventsVerticle(info, config, pool), db));
    }
    if (roles.contains(Role.COMMAND)) {
      perInstance(config, config.cluster().commandInstances(), (share, first) -> {
        // the first prunes idempotency keys for the node
        CommandVerticle command = new CommandVerticle(info, share, pool, first);
        drains.add(command::drain);
        deployments.add(deployed.deploy(command, db));
      });
    }
    if (roles.contains(Role.CHANGELOG)) {
      TopicVerticle topic = new TopicVerticle(info, config);
      RelayVerticle relay = new RelayVerticle(info, config, pool);
      ready.register("kafka" + suffix, CHECK_TIMEOUT_MILLIS, p -> topic.ready()
          .onSuccess(up -> p.tryComplete(up ? Status.OK() : Status.KO(new io.vertx.core.json.JsonObject()
              .put("topic", topic.topic()).put("error", "Kafka is unreachable or the topic is not ready"))))
          .onFailure(p::tryFail));
      ready.register("capture" + suffix, CHECK_TIMEOUT_MILLIS, p -> p.complete(relay.ready() ? Status.OK()
          : Status.KO(relay.lag().toJson().put("max_slot_lag_bytes", config.changelog().maxSlotLagBytes())
              .put("error", "the replication slot is missing, lost, or holds back more WAL than changelog.max-slot-lag-bytes"))));
      // the topic first, so that the relay's first records find it; capture before the relay reads
      deployments.add(deployed.deploy(topic, db)
          .compose(x -> deployed.deploy(new CaptureVerticle(config, pool), db))
          .compose(x -> deployed.deploy(relay, db)));
      if (suffix.isEmpty()) {
        // the node's relay gauges carry no database label: they measure the default database's relay
        RelayLagProbe.start(vertx, changelog, relay::relayActive, Meters.of(vertx).relayLag());
      }
    }
    if (roles.contains(Role.GATEWAY) || roles.contains(Role.QUERY)) {
      // once per node and database: a gateway hears of every change to notify the subscribers it holds,
      // and the query role hears of every schema change to drop the table shapes it cached
      deployments.add(deployed.deploy(new FanOutVerticle(info, config), db));
    }
  }

  /**
   * Calls {@code deploy} once per instance of a role's service ({@code configured} as the role's
   * node.*-instances says), with that instance's share of the config and whether it is the first.
   */
  private static void perInstance(TidemarkConfig config, int configured, java.util.function.BiConsumer<TidemarkConfig, Boolean> deploy) {
    int instances = config.cluster().instances(configured, config.database().poolSize());
    for (int i = 0; i < instances; i++) {
      deploy.accept(config.forInstance(i, instances), i == 0);
    }
  }

  /**
   * Ready when no partition of the cluster's maps lacks its backup, as Vert.x's own
   * {@code ClusterHealthCheck} says, but answered with try-complete: while a member that left is
   * being replaced, Hazelcast's answer can take longer than the check's timeout, and the late answer
   * to a check already answered as down failed with "Promise already completed", logged at ERROR
   * with a stack trace on every survivor. One question at a time: checks that come meanwhile share it.
   */
  private static io.vertx.core.Handler<io.vertx.core.Promise<Status>> clusterSafe(Vertx vertx, ClusterSetup.Clustered cluster) {
    java.util.concurrent.atomic.AtomicReference<Future<Boolean>> asking = new java.util.concurrent.atomic.AtomicReference<>();
    return p -> {
      Future<Boolean> answer = asking.updateAndGet(current -> current != null && !current.isComplete() ? current
          : vertx.executeBlocking(() -> cluster.manager().getHazelcastInstance().getPartitionService().isClusterSafe(), false));
      answer.onSuccess(safe -> p.tryComplete(new Status().setOk(safe))).onFailure(p::tryFail);
    };
  }

  private static String generatedNodeId() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = "node";
    }
    byte[] suffix = new byte[3];
    new SecureRandom().nextBytes(suffix);
    return host + "-" + HexFormat.of().formatHex(suffix);
  }

  public String nodeId() {
    return info.nodeId();
  }

  public Vertx vertx() {
    return cluster.vertx();
  }

  public TidemarkConfig config() {
    return config;
  }

  public int clusterSize() {
    return cluster.size();
  }

  /** The MCP endpoint's port, or -1 when this node runs no gateway. */
  public int httpPort() {
    return gateway == null ? -1 : gateway.actualPort();
  }

  public int opsPort() {
    return ops.actualPort();
  }

  /**
   * A graceful stop, as on SIGTERM: {@link #drain()}, then {@link #close()}. The drain is bounded by
   * {@code node.drain-timeout-ms}; the close is not delayed by what the drain could not finish.
   */
  public Future<Void> stop() {
    return drain().transform(ar -> close());
  }

  /**
   * Readiness goes down, the gateway refuses new requests and ends its streams with a hint to
   * reconnect elsewhere, the services stop taking requests; then it waits for the calls and
   * statements in flight, for at most {@code node.drain-timeout-ms}. The node stays in the
   * cluster, so that what finishes can still reply. See docs/operations.md.
   */
  public Future<Void> drain() {
    return drain.run(config.drainTimeoutMs());
  }

  /** Stops every verticle, then leaves the cluster, then exports the spans still waiting. */
  public Future<Void> close() {
    return deployed.stopAll().transform(x -> cluster.vertx().close()).eventually(() -> NodeTraces.shutdown(traces));
  }

  /** The verticles whose stop has not finished (while {@link #close()} runs), by name. */
  public Set<String> stillStopping() {
    return deployed.stillStopping();
  }
}
