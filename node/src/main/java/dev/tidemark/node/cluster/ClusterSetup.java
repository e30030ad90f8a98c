package dev.tidemark.node.cluster;

import dev.tidemark.config.ConfigKey;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import dev.tidemark.contract.Addresses;
import dev.tidemark.config.TidemarkConfig.ClusterConfig;
import dev.tidemark.node.ops.NodeMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

/**
 * Builds the clustered Vert.x instance: Hazelcast with TCP-IP join (or Kubernetes DNS discovery),
 * never multicast, so that nodes only ever join the cluster they were told about.
 */
public final class ClusterSetup {

  private ClusterSetup() {}

  public record Clustered(Vertx vertx, HazelcastClusterManager manager) {
    public int size() {
      try {
        return manager.getNodes().size();
      } catch (RuntimeException e) {
        return 0; // the member is shutting down or was cut off
      }
    }
  }

  public static Future<Clustered> start(ClusterConfig cluster, MeterRegistry registry) {
    // Hazelcast logs its first lines before it reads its config: without this they bypass SLF4J
    // (and its levels) and print through java.util.logging
    System.setProperty("hazelcast.logging.type", System.getProperty("hazelcast.logging.type", "slf4j"));
    HazelcastClusterManager manager = new HazelcastClusterManager(hazelcast(cluster));
    EventBusOptions bus = new EventBusOptions().setPort(cluster.eventBusPort());
    String busHost = cluster.eventBusHost().isEmpty() ? cluster.host() : cluster.eventBusHost();
    bus.setHost(busHost);
    // one event loop per core, not Vert.x's two: a tool call crosses the gateway's, the service's and
    // the connection's loops, and on few cores each extra loop adds hand-offs more than it adds work
    // done in parallel (measured in docs/performance-log.md)
    VertxOptions options = new VertxOptions().setEventBusOptions(bus).setEventLoopPoolSize(cluster.loops())
        .setMetricsOptions(NodeMetrics.vertxOptions());
    return Vertx.builder().with(options).withMetrics(new MicrometerMetricsFactory(registry)).withClusterManager(manager).buildClustered()
        .map(vertx -> {
          announceLeavers(vertx, manager);
          return new Clustered(vertx, manager);
        })
        .recover(err -> Future.failedFuture(isBind(err)
            ? (cluster.eventBusPort() > 0 && !hazelcastPort(err)
                ? ConfigKey.CLUSTER_EVENT_BUS_PORT.listenFailure(busHost, cluster.eventBusPort(), err)
                : ConfigKey.CLUSTER_PORT.listenFailure(cluster.host(), cluster.port(), err))
            : err));
  }

  private static boolean isBind(Throwable err) {
    for (Throwable t = err; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.net.BindException) {
        return true;
      }
    }
    return false;
  }

  /** Hazelcast gives up binding only once cluster.port and the 20 after it were all taken, and says so in its own exception. */
  private static boolean hazelcastPort(Throwable err) {
    for (Throwable t = err; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t.getClass().getName().startsWith("com.hazelcast")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Members found through a Kubernetes Service are looked up only while a starting member waits to join: with no wait, the
   * pods of a release that start together each form a cluster of their own (seen when the chart's pods were run), so the
   * wait there is never below {@link #KUBERNETES_MIN_JOIN_WAIT_SECONDS}.
   */
  static final int KUBERNETES_MIN_JOIN_WAIT_SECONDS = 5;

  static int joinWaitSeconds(ClusterConfig cluster) {
    return cluster.kubernetesServiceDns().isEmpty() ? cluster.joinWaitSeconds()
        : Math.max(KUBERNETES_MIN_JOIN_WAIT_SECONDS, cluster.joinWaitSeconds());
  }

  /**
   * Publishes each member that leaves the cluster on this node's event bus
   * ({@link Addresses#NODE_LEFT_V1}), for the parts that wait on other members. The cluster manager
   * takes one listener; Vert.x sets it only for its HA mode, which Tidemark leaves off.
   */
  private static void announceLeavers(Vertx vertx, HazelcastClusterManager manager) {
    DeliveryOptions local = new DeliveryOptions().setLocalOnly(true);
    manager.nodeListener(new NodeListener() {
      @Override
      public void nodeAdded(String nodeId) {
        // nothing waits for a member that joins
      }

      @Override
      public void nodeLeft(String nodeId) {
        vertx.eventBus().publish(Addresses.NODE_LEFT_V1, nodeId, local);
      }
    });
  }

  static Config hazelcast(ClusterConfig cluster) {
    Config hz = ConfigUtil.loadConfig();
    hz.setClusterName(cluster.name());
    hz.setProperty("hazelcast.phone.home.enabled", "false");
    hz.setProperty("hazelcast.shutdownhook.enabled", "false"); // Tidemark closes Vert.x, which closes Hazelcast
    hz.setProperty("hazelcast.logging.type", "slf4j");
    // a dead member is noticed within seconds, not the default minute
    hz.setProperty("hazelcast.heartbeat.interval.seconds", "1");
    hz.setProperty("hazelcast.max.no.heartbeat.seconds", "10");
    hz.setProperty("hazelcast.wait.seconds.before.join", String.valueOf(joinWaitSeconds(cluster)));
    hz.setProperty("hazelcast.local.localAddress", cluster.host());
    // leaving waits for the partitions it owns to reach the members that stay, at most this long
    // (Hazelcast's default is 10 minutes); their backups are already there, so little is at stake
    hz.setProperty("hazelcast.graceful.shutdown.max.wait", "10");
    NetworkConfig net = hz.getNetworkConfig();
    net.setPort(cluster.port()).setPortAutoIncrement(true).setPortCount(20);
    // a node restarted in place binds its own port again while the old socket is in TIME_WAIT
    // (Hazelcast's default is not to); on the next port instead, it met the address it had been
    // given as a member and took it for another ("Connecting to self!")
    net.setReuseAddress(true);
    net.getInterfaces().setEnabled(false);
    JoinConfig join = net.getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    if (!cluster.kubernetesServiceDns().isEmpty()) {
      join.getTcpIpConfig().setEnabled(false);
      join.getKubernetesConfig().setEnabled(true).setProperty("service-dns", cluster.kubernetesServiceDns());
    } else {
      join.getTcpIpConfig().setEnabled(true).setMembers(cluster.members());
    }
    return hz;
  }
}
