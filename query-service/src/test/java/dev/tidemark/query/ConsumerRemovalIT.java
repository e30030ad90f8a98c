package dev.tidemark.query;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.Pools;
import dev.tidemark.query.events.ConsumerAdmin;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A consumer nobody uses for events.consumer-idle-seconds is removed with its share group, its
 * dead-letter topic and its row (checked on the broker with Kafka's Admin client, and in
 * PostgreSQL); one in use is kept; an administrator lists consumers and deletes one the same way;
 * a removed consumer's name makes a new consumer.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerRemovalIT {

  static final String DB = "consumer_removal_it";
  static final String NAME = "crit";
  static final int IDLE_SECONDS = 6;
  static final Duration WAIT = Duration.ofSeconds(90);

  private SharedInfra infra;
  private ServiceHarness server;
  private Admin kafka;
  private Vertx vertx;
  private ConsumerAdmin admin;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.cr_items (id int PRIMARY KEY)",
        "GRANT SELECT ON public.cr_items TO tidemark_reader, tidemark_writer");
    server = QueryRole.withChangelog(infra, DB, Map.of(ConfigKey.DATABASE_NAME, NAME,
        ConfigKey.EVENTS_CONSUMER_IDLE_SECONDS, String.valueOf(IDLE_SECONDS), ConfigKey.EVENTS_CONSUMER_SWEEP_SECONDS, "1"));
    kafka = Admin.create(Map.of("bootstrap.servers", infra.kafkaBootstrapServers()));
    vertx = Vertx.vertx();
    Map<ConfigKey, String> values = ServiceHarness.config(infra, "query");
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    admin = new ConsumerAdmin(vertx, Pools.create(vertx, TidemarkConfig.from(values).database()), NAME);
  }

  @AfterAll
  void stop() {
    if (vertx != null) {
      vertx.close().await();
    }
    if (kafka != null) {
      kafka.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static JsonObject next(String consumer) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add("cr_items")).put("lease_seconds", 10).put("wait_ms", 0);
  }

  private String column(String consumer, String column) {
    var found = TestDatabases.strings(infra, DB, "SELECT " + column + " FROM tidemark.event_consumer WHERE name = '" + consumer + "'");
    return found.isEmpty() ? null : found.get(0);
  }

  private boolean groupOnBroker(String group) throws Exception {
    return kafka.listGroups().all().get(30, TimeUnit.SECONDS).stream().anyMatch(g -> g.groupId().equals(group));
  }

  private Set<String> topics() throws Exception {
    return kafka.listTopics().names().get(30, TimeUnit.SECONDS);
  }

  /** The configs Tidemark set on the group, if the broker still keeps them. */
  private long groupConfigs(String group) throws Exception {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
    return kafka.describeConfigs(java.util.List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource).entries().stream()
        .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG).count();
  }

  /** Makes a consumer that has a share group on the broker (it joined it once) and returns its share group. */
  private String made(String consumer) throws Exception {
    assertTrue(server.ok(ServiceHarness.READER, "events_next", next(consumer)).getBoolean("created"));
    String group = column(consumer, "group_id");
    Await.that("the share group of " + consumer + " on the broker", WAIT, () -> {
      try {
        return groupOnBroker(group);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    return group;
  }

  @Test
  void anUnusedConsumerIsRemovedWithItsShareGroupAndDeadLetterTopicAndOneInUseIsKept() throws Exception {
    long started = System.nanoTime();
    String idle = made("idle");
    // the suite's broker keeps dead letters in a topic per group (KIP-1191), as EventsIT shows
    String dlq = column("idle", "dead_letter_topic");
    assertNotNull(dlq, "the consumer was given a dead-letter topic");
    assertTrue(topics().contains(dlq), "the dead-letter topic exists first");
    assertTrue(groupConfigs(idle) > 0, "the group's configs are set");
    String busy = made("busy");
    // the busy one is used more often than the idle time; the idle one not at all
    Await.that("the idle consumer's row removed", WAIT, () -> {
      assertFalse(server.ok(ServiceHarness.READER, "events_next", next("busy")).getBoolean("created"));
      return column("idle", "group_id") == null;
    });
    long tookSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    assertTrue(tookSeconds >= IDLE_SECONDS - 1, "removed after " + tookSeconds + " s, before it was idle for " + IDLE_SECONDS + " s");
    assertFalse(groupOnBroker(idle), "its share group is gone");
    assertEquals(0, groupConfigs(idle), "its group configs are gone");
    assertFalse(topics().contains(dlq), "its dead-letter topic is gone");
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM tidemark.event_dead_letter WHERE group_id = '" + idle + "'"));
    server.error(ServiceHarness.READER, "events_status", new JsonObject().put("consumer", "idle"), "NOT_FOUND");

    // the one in use stayed, with its share group
    assertNotNull(column("busy", "group_id"));
    assertTrue(groupOnBroker(busy));

    // the name makes a new consumer, which starts from now
    assertTrue(server.ok(ServiceHarness.READER, "events_next", next("idle")).getBoolean("created"));
  }

  @Test
  void anAdministratorListsConsumersAndDeletesOne() throws Exception {
    String group = made("doomed");
    JsonArray listed = admin.list().await(30, TimeUnit.SECONDS);
    JsonObject doomed = listed.stream().map(JsonObject.class::cast).filter(c -> group.equals(c.getString("group_id"))).findFirst()
        .orElseThrow(() -> new AssertionError("not listed: " + listed.encode()));
    assertEquals("doomed", doomed.getString("name"));
    assertEquals(ServiceHarness.READER.id(), doomed.getString("owner"));
    assertEquals(ServiceHarness.READER.pgRole(), doomed.getString("owner_role"));
    assertEquals(ServiceHarness.READER.name(), doomed.getString("owner_name"));
    assertEquals(new JsonArray().add("cr_items"), doomed.getJsonArray("tables"));
    assertTrue(doomed.containsKey("last_used_at") && doomed.containsKey("created_at"), doomed::encode);

    assertTrue(admin.delete(group, WAIT.toMillis()).await(WAIT.toSeconds() + 10, TimeUnit.SECONDS), "removed within the wait");
    assertNull(column("doomed", "group_id"));
    assertFalse(groupOnBroker(group));
    server.error(ServiceHarness.READER, "events_status", new JsonObject().put("consumer", "doomed"), "NOT_FOUND");

    var unknown = admin.delete(group, 0).transform(ar -> io.vertx.core.Future.succeededFuture(ar.cause())).await(30, TimeUnit.SECONDS);
    assertEquals(ErrorCode.NOT_FOUND, ((ToolException) unknown).code(), String.valueOf(unknown));
  }
}
