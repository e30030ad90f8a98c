package dev.tidemark.node;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.changelog.CaptureVerticle;
import dev.tidemark.changelog.RelayVerticle;
import dev.tidemark.changelog.TopicVerticle;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.command.CommandVerticle;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.Role;
import dev.tidemark.contract.Version;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.gateway.GatewayVerticle;
import dev.tidemark.gateway.McpExtension;
import dev.tidemark.node.cluster.ClusterSetup;
import dev.tidemark.node.ops.OpsVerticle;
import dev.tidemark.query.QueryVerticle;
import dev.tidemark.query.impl.ChangelogStaleness;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import io.vertx.spi.cluster.hazelcast.ClusterHealthCheck;
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
  private final GatewayVerticle gateway;
  private final OpsVerticle ops;

  private TidemarkNode(TidemarkConfig config, ClusterSetup.Clustered cluster, NodeInfo info, GatewayVerticle gateway, OpsVerticle ops) {
    this.config = config;
    this.cluster = cluster;
    this.info = info;
    this.gateway = gateway;
    this.ops = ops;
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
    String nodeId = config.nodeId().isEmpty() ? generatedNodeId() : config.nodeId();
    return ClusterSetup.start(config.cluster()).compose(cluster -> {
      Vertx vertx = cluster.vertx();
      Set<Role> roles = config.roles();
      NodeInfo info = new NodeInfo(nodeId, Version.get(), roles, cluster::size);
      boolean needsDatabase = roles.contains(Role.GATEWAY) || roles.contains(Role.QUERY) || roles.contains(Role.COMMAND)
          || roles.contains(Role.CHANGELOG);
      Pool pool = needsDatabase ? Pools.create(vertx, config.database()) : null;

      HealthChecks live = HealthChecks.create(vertx).register("event-loop", p -> p.complete(Status.OK()));
      HealthChecks ready = HealthChecks.create(vertx)
          .register("cluster", CHECK_TIMEOUT_MILLIS, ClusterHealthCheck.createProcedure(vertx));
      if (pool != null) {
        ready.register("postgres", CHECK_TIMEOUT_MILLIS, p -> pool.query("SELECT 1").execute()
            .onSuccess(rows -> p.complete(Status.OK()))
            .onFailure(err -> p.complete(Status.KO(new io.vertx.core.json.JsonObject().put("error", err.getMessage())))));
      }

      List<Future<String>> deployments = new ArrayList<>();
      if (roles.contains(Role.QUERY)) {
        deployments.add(vertx.deployVerticle(new QueryVerticle(info, config, pool, new ChangelogStaleness(pool))));
      }
      if (roles.contains(Role.COMMAND)) {
        deployments.add(vertx.deployVerticle(new CommandVerticle(info, config, pool)));
      }
      if (roles.contains(Role.CHANGELOG)) {
        TopicVerticle topic = new TopicVerticle(info, config);
        RelayVerticle relay = new RelayVerticle(info, config, pool);
        ready.register("kafka", CHECK_TIMEOUT_MILLIS, p -> topic.ready()
            .onSuccess(up -> p.complete(up ? Status.OK() : Status.KO(new io.vertx.core.json.JsonObject()
                .put("topic", topic.topic()).put("error", "Kafka is unreachable or the topic is not ready"))))
            .onFailure(p::fail));
        ready.register("capture", CHECK_TIMEOUT_MILLIS, p -> p.complete(relay.ready() ? Status.OK()
            : Status.KO(relay.lag().toJson().put("max_slot_lag_bytes", config.changelog().maxSlotLagBytes())
                .put("error", "the replication slot is missing, lost, or holds back more WAL than changelog.max-slot-lag-bytes"))));
        // the topic first, so that the relay's first records find it; capture before the relay reads
        deployments.add(vertx.deployVerticle(topic)
            .compose(x -> vertx.deployVerticle(new CaptureVerticle(config, pool)))
            .compose(x -> vertx.deployVerticle(relay)));
      }
      GatewayVerticle gateway = null;
      if (roles.contains(Role.GATEWAY)) {
        Authenticator auth = config.authEnabled() ? TokenStore.create(pool)
            .authenticator(vertx, Pools.connectOptions(config.database())) : null;
        gateway = new GatewayVerticle(info, config, auth, extensionsOf.apply(vertx));
        deployments.add(vertx.deployVerticle(gateway));
        // every gateway hears of every change, to notify the subscribers it holds
        deployments.add(vertx.deployVerticle(new FanOutVerticle(info, config)));
      }
      OpsVerticle ops = new OpsVerticle(config.ops(), live, ready);
      GatewayVerticle gw = gateway;
      return Future.all(deployments)
          .compose(x -> vertx.deployVerticle(ops))
          .map(x -> {
            LOG.info("node {} runs {} (cluster of {})", nodeId, roles, cluster.size());
            return new TidemarkNode(config, cluster, info, gw, ops);
          })
          .recover(err -> vertx.close().transform(x -> Future.failedFuture(err)));
    });
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

  /** Stops every verticle, then leaves the cluster. */
  public Future<Void> close() {
    return cluster.vertx().close();
  }
}
