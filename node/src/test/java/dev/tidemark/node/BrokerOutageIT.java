package dev.tidemark.node;

import dev.tidemark.database.Pools;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** A broker that goes down makes the changelog role not ready; when it returns, publishing resumes and nothing is lost. */
@ExtendWith(InfraExtension.class)
class BrokerOutageIT {

  private static final String DATABASE = "tidemark_outage";

  @Test
  void changesCommittedWhileTheBrokerIsDownArePublishedWhenItReturns(SharedInfra infra, @TempDir Path brokerDir) throws Exception {
    infra.postgres().createDatabaseIfMissing(DATABASE);
    Vertx setup = Vertx.vertx();
    try {
      Map<ConfigKey, String> db = Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DATABASE),
          ConfigKey.DATABASE_USER, infra.postgres().user(), ConfigKey.DATABASE_PASSWORD, infra.postgres().password());
      DevSetup.prepare(Pools.create(setup, TidemarkConfig.from(db).database()), "tmk_outageReadWrite000000000000000", "tmk_outageReadOnly0000000000000000",
          TestNodes.CALLER_PASSWORDS)
          .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } finally {
      setup.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    int[] ports = FreePorts.allocate(2);
    String bootstrap = "127.0.0.1:" + ports[0];
    EmbeddedKafkaBroker broker = ChangelogFixtures.startBroker(brokerDir, ports);
    TidemarkNode node = TestNodes.startAlone(infra, "changelog", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DATABASE),
        ConfigKey.KAFKA_BOOTSTRAP_SERVERS, bootstrap,
        ConfigKey.KAFKA_REQUEST_TIMEOUT_MS, "2000",
        ConfigKey.CHANGELOG_RELAY_POLL_MS, "200"));
    String topic = node.config().kafka().topicFor(node.config().database().name());
    try {
      insert(infra, "before", 40);
      assertTrue(Await.until(() -> emails(bootstrap, topic).size() >= 40, Duration.ofSeconds(30)), "published while the broker is up");
      assertEquals(200, readiness(node));

      broker.close();
      assertTrue(Await.until(() -> readiness(node) == 503, Duration.ofSeconds(30)), "not ready while the broker is down");
      insert(infra, "during", 40);

      broker = ChangelogFixtures.startBroker(brokerDir, ports);
      assertTrue(Await.until(() -> readiness(node) == 200, Duration.ofSeconds(60)), "ready again once the broker is back");
      assertTrue(Await.until(() -> emails(bootstrap, topic).size() >= 80, Duration.ofSeconds(60)), "the changes made during the outage are published");
      Set<String> all = emails(bootstrap, topic);
      for (int i = 0; i < 40; i++) {
        assertTrue(all.contains("before-" + i + "@outage.test") && all.contains("during-" + i + "@outage.test"), "change " + i + " is on the topic");
      }
    } finally {
      TestNodes.stop(node);
      broker.close();
    }
  }

  private static void insert(SharedInfra infra, String prefix, int count) throws Exception {
    try (Connection conn = DriverManager.getConnection(infra.postgres().jdbcUrl(DATABASE), infra.postgres().user(), infra.postgres().password())) {
      for (int i = 0; i < count; i++) {
        conn.createStatement().execute("INSERT INTO customers(name, email) VALUES ('Outage', '" + prefix + "-" + i + "@outage.test')");
      }
    }
  }

  private static int readiness(TidemarkNode node) {
    try (McpHttpClient c = new McpHttpClient("http://127.0.0.1:" + node.opsPort() + "/health/ready", null)) {
      return c.send("GET", null, MultiMap.caseInsensitiveMultiMap()).status();
    }
  }

  /** The emails of every customer insert on the topic, read from the beginning. */
  private static Set<String> emails(String bootstrap, String topic) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    p.put("default.api.timeout.ms", "3000");
    Set<String> out = new HashSet<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      List<TopicPartition> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(3)).stream()
          .map(i -> new TopicPartition(topic, i.partition())).toList();
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions);
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp)) && System.nanoTime() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          JsonObject change = new JsonObject(r.value());
          JsonObject after = change.getJsonObject("after");
          if ("customers".equals(change.getString("table")) && after != null && after.getString("email", "").endsWith("@outage.test")) {
            out.add(after.getString("email"));
          }
        }
      }
    } catch (RuntimeException e) {
      return Set.of(); // the broker is not reachable right now
    }
    return out;
  }
}
