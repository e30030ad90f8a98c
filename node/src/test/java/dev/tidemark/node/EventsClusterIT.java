package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two nodes with the query role in one cluster, B also running the relay: an ack or nack sent
 * through B reaches the share consumer on A that holds the lease, and when A stops without
 * acknowledging, a worker on B gets the same event with a higher delivery count.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EventsClusterIT {

  static final String DB = "events_cluster_it";
  static final String NAME = "evcl";
  private static final AtomicInteger IDS = new AtomicInteger((int) (System.nanoTime() & 0xfffff));

  private SharedInfra infra;
  private TidemarkNode a;
  private TidemarkNode b;
  private McpHttpClient onA;
  private McpHttpClient onB;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.ev_jobs (id int PRIMARY KEY)", "GRANT SELECT ON public.ev_jobs TO tidemark_writer");
    // Tidemark's own dead letters here; the query module's EventsIT uses the broker's dead-letter topics
    TidemarkNode[] pair = ChangelogFixtures.startQueryPair(infra, DB, NAME, "events", Map.of(ConfigKey.EVENTS_BROKER_DEAD_LETTERS, "false",
        ConfigKey.EVENTS_MAX_DELIVERIES, "2", ConfigKey.EVENTS_ADMIN_ROLES, dev.tidemark.node.dev.DevSetup.WRITER_ROLE));
    a = pair[0];
    b = pair[1];
    onA = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_WRITE_TOKEN);
    onA.initialize();
    onB = new McpHttpClient(TestNodes.mcpUrl(b), TestNodes.READ_WRITE_TOKEN);
    onB.initialize();
  }

  @AfterAll
  void stop() throws Exception {
    onA.close();
    onB.close();
    TestNodes.stop(a);  // null once the failover test stopped it
    TestNodes.stop(b);
  }

  private int insert() {
    int id = IDS.incrementAndGet();
    sql(infra, DB, "INSERT INTO public.ev_jobs VALUES (" + id + ")");
    return id;
  }

  @Test
  @Order(1)
  void anAckOrNackSentThroughTheOtherNodeReachesTheNodeThatHoldsTheLease() {
    JsonObject args = Events.next("routed", "ev_jobs", 20);
    assertTrue(ToolResults.ok(onA, "events_next", args.copy().put("wait_ms", 0)).getBoolean("created"));
    int acked = insert();
    JsonObject first = Events.await(onA, args, acked, e -> true);
    assertEquals(1, ToolResults.ok(onB, "events_ack", Events.ackArgs("routed", first)).getInteger("acknowledged"));
    int nacked = insert();
    JsonObject held = Events.await(onA, args, nacked, e -> true);
    assertEquals(1, ToolResults.ok(onB, "events_nack", Events.ackArgs("routed", held)).getInteger("released"));
    JsonObject again = Events.await(onA, args, nacked, e -> true);
    assertEquals(2, again.getInteger("delivery_count"), again::encode);
    ToolResults.ok(onB, "events_ack", Events.ackArgs("routed", again));
    // the acknowledged one never came again meanwhile: await acks whatever else it sees, and would have failed on a repeat
    JsonObject none = ToolResults.ok(onA, "events_next", args.copy().put("wait_ms", 1500));
    assertTrue(none.getJsonArray("events").stream().noneMatch(e -> Events.keyOf((JsonObject) e) == acked), none::encode);
  }

  @Test
  @Order(2)
  void withoutTheBrokersDeadLetterTopicTidemarkDeadLettersPastItsLimitAndSeekReDrives() {
    JsonObject args = Events.next("own-dead", "ev_jobs", 20);
    assertTrue(ToolResults.ok(onA, "events_next", args.copy().put("wait_ms", 0)).getBoolean("created"));
    int id = insert();
    Events.deadLetterThenReDrive(onA, args, id, Events.await(onA, args, id, e -> true));
  }

  @Test
  @Order(3)
  void anEventLeasedOnANodeThatStopsComesToAWorkerOnTheOtherNodeWithAHigherDeliveryCount() {
    // a lease far longer than the test's patience: the event can only come back because A handed it back
    JsonObject args = Events.next("failover", "ev_jobs", 60);
    assertTrue(ToolResults.ok(onA, "events_next", args.copy().put("wait_ms", 0)).getBoolean("created"));
    int id = insert();
    JsonObject onNodeA = Events.await(onA, args, id, e -> true);
    assertEquals(1, onNodeA.getInteger("delivery_count"));
    long stopped = System.nanoTime();
    TestNodes.stop(a);
    a = null;
    JsonObject onNodeB = Events.await(onB, args, id, e -> true);
    assertTrue(onNodeB.getInteger("delivery_count") > 1, onNodeB::encode);
    assertEquals(onNodeA.getString("event_id"), onNodeB.getString("event_id"));
    assertTrue(System.nanoTime() - stopped < 50_000_000_000L, "handed back on close, not after the 60 s lock");
    ToolResults.error(onB, "events_ack", Events.ackArgs("failover", onNodeA), "LEASE_EXPIRED");
    assertEquals(1, ToolResults.ok(onB, "events_ack", Events.ackArgs("failover", onNodeB)).getInteger("acknowledged"));
    assertTrue(ToolResults.ok(onB, "events_next", args.copy().put("wait_ms", 1500)).getJsonArray("events").stream()
        .noneMatch(e -> Events.keyOf((JsonObject) e) == id));
  }
}
