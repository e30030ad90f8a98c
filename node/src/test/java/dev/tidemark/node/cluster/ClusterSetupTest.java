package dev.tidemark.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClusterSetupTest {

  private static TidemarkConfig.ClusterConfig cluster(Map<ConfigKey, String> values) {
    return TidemarkConfig.from(values).cluster();
  }

  @Test
  void membersFoundThroughAKubernetesServiceWaitLongEnoughToBeFound() {
    assertEquals("5", ClusterSetup.hazelcast(cluster(Map.of(ConfigKey.CLUSTER_KUBERNETES_SERVICE_DNS, "t-cluster.ns.svc.cluster.local")))
        .getProperty("hazelcast.wait.seconds.before.join"), "a wait of 0 would leave every pod a cluster of its own");
    assertEquals("12", ClusterSetup.hazelcast(cluster(Map.of(ConfigKey.CLUSTER_KUBERNETES_SERVICE_DNS, "t-cluster.ns.svc.cluster.local",
        ConfigKey.CLUSTER_JOIN_WAIT_SECONDS, "12"))).getProperty("hazelcast.wait.seconds.before.join"));
  }

  @Test
  void membersListedByAddressJoinWithoutWaiting() {
    assertEquals("0", ClusterSetup.hazelcast(cluster(Map.of())).getProperty("hazelcast.wait.seconds.before.join"));
  }
}
