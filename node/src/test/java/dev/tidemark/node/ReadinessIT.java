package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.McpHttpClient.Reply;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Readiness follows the node's roles: each role's dependency down makes the node not ready, liveness stays up. */
@ExtendWith(InfraExtension.class)
class ReadinessIT {

  @Test
  void aChangelogNodeIsNotReadyWhileKafkaIsUnreachable(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);  // the changelog role reads and writes PostgreSQL too
    TidemarkNode node = TestNodes.startAlone(infra, "changelog", Map.of(
        ConfigKey.KAFKA_BOOTSTRAP_SERVERS, "127.0.0.1:" + FreePorts.allocate(),
        ConfigKey.KAFKA_REQUEST_TIMEOUT_MS, "1000"));
    try {
      Map<String, String> checks = checks(node, "/health/ready", 503);
      assertEquals(Map.of("cluster", "UP", "kafka", "DOWN", "capture", "UP", "postgres", "UP"), checks);
      assertEquals(Map.of("event-loop", "UP"), checks(node, "/health/live", 200));
    } finally {
      TestNodes.stop(node);
    }
  }

  @Test
  void aQueryNodeIsNotReadyWhilePostgresIsUnreachable(SharedInfra infra) {
    TidemarkNode node = TestNodes.startAlone(infra, "query", Map.of(
        ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + FreePorts.allocate() + "/nowhere"));
    try {
      assertEquals(Map.of("cluster", "UP", "postgres", "DOWN"), checks(node, "/health/ready", 503));
    } finally {
      TestNodes.stop(node);
    }
  }

  @Test
  void aChangelogNodeWithKafkaIsReadyAndItsTopicExists(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    TidemarkNode node = TestNodes.startAlone(infra, "changelog", Map.of(ConfigKey.KAFKA_TOPIC_PREFIX, "it.readiness."));
    try {
      assertEquals(Map.of("cluster", "UP", "kafka", "UP", "capture", "UP", "postgres", "UP"), checks(node, "/health/ready", 200));
      try (var admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers", infra.kafkaBootstrapServers()))) {
        assertEquals(true, admin.listTopics().names().get().contains("it.readiness.main"));
      }
    } finally {
      TestNodes.stop(node);
    }
  }

  /** The checks of one health endpoint as id to status. */
  private static Map<String, String> checks(TidemarkNode node, String path, int expectedStatus) {
    try (McpHttpClient c = new McpHttpClient("http://127.0.0.1:" + node.opsPort() + path, null)) {
      Reply reply = c.send("GET", null, MultiMap.caseInsensitiveMultiMap());
      assertEquals(expectedStatus, reply.status(), reply.body());
      return reply.json().getJsonArray("checks").stream().map(JsonObject.class::cast)
          .collect(Collectors.toMap(c2 -> c2.getString("id"), c2 -> c2.getString("status")));
    }
  }
}
