package dev.tidemark.query;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.query.events.impl.ConsumerStore;
import dev.tidemark.query.events.impl.ConsumerStore.Claimed;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Events consumers are bounded per caller and per role: past a quota, events_next is
 * LIMIT_EXCEEDED naming it, and nothing is made (no row, no share group, no dead-letter topic).
 * What a consumer holds is in events_status; what 30 consumers cost a node in threads is measured,
 * and given back when their share consumers go idle. Two nodes that claim consumers to remove at
 * once never claim the same one.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsumerQuotaIT {

  static final String DB = "consumer_quota_it";
  static final String NAME = "cqit";
  static final int PER_CALLER = 30;
  static final int PER_ROLE = 31;
  static final int WORKER_IDLE_SECONDS = 30;
  /** events.max-workers-per-caller: the share consumers one caller holds open on the node. */
  static final int WORKERS = 4;
  static final Duration WAIT = Duration.ofSeconds(60);

  private static final Caller FIRST = reader("it-quota-first");
  private static final Caller SECOND = reader("it-quota-second");
  private static final Caller THIRD = reader("it-quota-third");

  private SharedInfra infra;
  private ServiceHarness server;
  private Admin kafka;

  private static Caller reader(String id) {
    return new Caller(id, id, DatabaseSetup.READER_ROLE, Access.READ_ONLY, List.of("*"));
  }

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.cq_items (id int PRIMARY KEY)",
        "GRANT SELECT ON public.cq_items TO tidemark_reader, tidemark_writer");
    server = QueryRole.withChangelog(infra, DB, Map.of(ConfigKey.DATABASE_NAME, NAME,
        ConfigKey.EVENTS_MAX_CONSUMERS_PER_CALLER, String.valueOf(PER_CALLER), ConfigKey.EVENTS_MAX_CONSUMERS_PER_ROLE, String.valueOf(PER_ROLE),
        ConfigKey.EVENTS_WORKER_IDLE_SECONDS, String.valueOf(WORKER_IDLE_SECONDS), ConfigKey.EVENTS_CONSUMER_IDLE_SECONDS, "0",
        ConfigKey.EVENTS_MAX_WORKERS_PER_CALLER, String.valueOf(WORKERS)));
    kafka = Admin.create(Map.of("bootstrap.servers", infra.kafkaBootstrapServers()));
  }

  @AfterAll
  void stop() {
    if (kafka != null) {
      kafka.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static JsonObject next(String consumer) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add("cq_items")).put("lease_seconds", 10).put("wait_ms", 0);
  }

  private long rows(String where) {
    return TestDatabases.count(infra, DB, "SELECT count(*) FROM tidemark.event_consumer WHERE " + where);
  }

  private Set<String> shareGroups() throws Exception {
    Set<String> out = new HashSet<>();
    kafka.listGroups().all().get(30, TimeUnit.SECONDS).forEach(g -> out.add(g.groupId()));
    return out;
  }

  private Set<String> topics() throws Exception {
    return kafka.listTopics().names().get(30, TimeUnit.SECONDS);
  }

  /** Threads of the node's share consumers: each its own ("tidemark-events-<id>") and the Kafka client's network thread. */
  private static long eventsThreads() {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("tidemark-events-")
        || t.getName().equals("consumer_background_thread")).count();
  }

  /** The share consumers' threads beyond {@code before}, once those that made room for others have closed. */
  private static long settled(long before) {
    Await.until(() -> eventsThreads() - before <= 2L * WORKERS, WAIT);
    return eventsThreads() - before;
  }

  private static int threads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  private static long heapAfterGc() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  @Test
  void pastItsQuotaOrItsRolesACallerMakesNoConsumerAndNothingOnTheBroker() throws Exception {
    int threadsBefore = threads();
    long eventsBefore = eventsThreads();
    long heapBefore = heapAfterGc();
    long started = System.nanoTime();
    for (int i = 0; i < PER_CALLER; i++) {
      assertTrue(server.ok(FIRST, "events_next", next("q" + i)).getBoolean("created"));
    }
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    int threadsWith = threads();
    long eventsWith = eventsThreads();
    long heapWith = heapAfterGc();
    System.out.printf("consumers: %d consumers made and leased once in %d ms: %+d threads (%+d of share consumers), %+d KB of heap"
        + " after a collection; once the ones that made room closed: %+d threads of share consumers%n", PER_CALLER, tookMs,
        threadsWith - threadsBefore, eventsWith - eventsBefore, (heapWith - heapBefore) / 1024, settled(eventsBefore));
    assertTrue(tookMs < WORKER_IDLE_SECONDS * 1000L, "the measure ran past the share consumers' idle time");
    // the share consumers made room for (the caller's idlest) close on their own threads, a moment later
    Await.that("at most events.max-workers-per-caller share consumers, two threads each", WAIT,
        () -> eventsThreads() - eventsBefore <= 2L * WORKERS);

    JsonObject refused = server.error(FIRST, "events_next", next("one-too-many"), "LIMIT_EXCEEDED");
    assertEquals("events.max-consumers-per-caller", refused.getString("limit"), refused::encode);
    assertEquals(PER_CALLER, refused.getInteger("max_consumers"));
    assertEquals(PER_CALLER, refused.getInteger("consumers"));
    assertTrue(refused.getString("message").contains("events.max-consumers-per-caller"), refused.getString("message"));
    // a consumer it has is still served
    assertFalse(server.ok(FIRST, "events_next", next("q0")).getBoolean("created"));

    // another caller of the role takes the role's last place; a third finds the role full
    assertTrue(server.ok(SECOND, "events_next", next("s0")).getBoolean("created"));
    JsonObject roleFull = server.error(THIRD, "events_next", next("t0"), "LIMIT_EXCEEDED");
    assertEquals("events.max-consumers-per-role", roleFull.getString("limit"), roleFull::encode);
    assertEquals(PER_ROLE, roleFull.getInteger("max_consumers"));
    // a caller of another role is not counted against this one
    assertTrue(server.ok(ServiceHarness.WRITER, "events_next", next("w0")).getBoolean("created"));

    // nothing of the refused ones was made: no row, no share group, no dead-letter topic
    assertEquals(0, rows("name IN ('one-too-many', 't0')"));
    Set<String> groups = shareGroups();
    Set<String> topics = topics();
    for (String made : List.of("q0", "s0")) {
      assertTrue(groups.stream().anyMatch(g -> g.endsWith("." + made)), "the share group of " + made + " in " + groups);
    }
    for (String refusedName : List.of("one-too-many", "t0")) {
      assertFalse(groups.stream().anyMatch(g -> g.endsWith("." + refusedName)), refusedName + " has a share group: " + groups);
      assertFalse(topics.stream().anyMatch(t -> t.endsWith("." + refusedName)), refusedName + " has a topic: " + topics);
    }

    // their share consumers close once idle, and the threads go with them
    Await.that("the share consumers closed", WAIT, () -> eventsThreads() <= eventsBefore);
    assertEquals(0, server.ok(FIRST, "events_status", new JsonObject().put("consumer", "q5")).getJsonObject("resources")
        .getInteger("workers_here"));
    System.out.printf("consumers: after %d s idle their share consumers closed: %+d threads (%+d of share consumers), %+d KB of heap"
        + " against before%n", WORKER_IDLE_SECONDS, threads() - threadsBefore, eventsThreads() - eventsBefore,
        (heapAfterGc() - heapBefore) / 1024);
  }

  /** A caller whose share consumers on the node all hold leases gets UNAVAILABLE naming the cap; one that ends makes room. */
  @Test
  void aCallersShareConsumersOnANodeAreCappedAndAFullCapIsRetriable() {
    Caller workers = new Caller("it-quota-workers", "it-quota-workers", DatabaseSetup.WRITER_ROLE, Access.READ_WRITE, List.of("*"));
    for (int i = 0; i <= WORKERS; i++) {
      server.ok(workers, "events_next", next("k" + i));
    }
    sql(infra, DB, "INSERT INTO public.cq_items VALUES (" + (int) (System.nanoTime() & 0xfffffff) + ")");
    List<JsonObject> held = new ArrayList<>();
    for (int i = 0; i < WORKERS; i++) {
      JsonObject args = next("k" + i).put("wait_ms", 2000);
      JsonObject[] leased = new JsonObject[1];
      Await.that("an event for k" + i, WAIT, () -> {
        JsonArray events = server.ok(workers, "events_next", args).getJsonArray("events");
        leased[0] = events.isEmpty() ? null : events.getJsonObject(0);
        return leased[0] != null;
      });
      held.add(leased[0]);
    }
    JsonObject full = server.error(workers, "events_next", next("k" + WORKERS), "UNAVAILABLE");
    assertEquals("events.max-workers-per-caller", full.getString("limit"), full::encode);
    assertEquals(WORKERS, full.getInteger("max_workers"));
    long retry = full.getLong("retry_after_ms");
    assertTrue(retry >= 100 && retry <= 10_000, "retry_after_ms " + retry);
    // another caller is not held back by this one's leases
    server.ok(ServiceHarness.WRITER, "events_next", next("w-other"));
    // an ack ends a lease: its share consumer is free, and makes room
    server.ok(workers, "events_ack", new JsonObject().put("consumer", "k0").put("event_ids", new JsonArray().add(held.get(0).getString("event_id")))
        .put("lease_token", held.get(0).getString("lease_token")));
    server.ok(workers, "events_next", next("k" + WORKERS));
  }

  @Test
  void statusSaysWhatTheConsumerHolds() {
    JsonObject created = server.ok(ServiceHarness.WRITER, "events_next", next("held"));
    JsonObject status = server.ok(ServiceHarness.WRITER, "events_status", new JsonObject().put("consumer", "held"));
    JsonObject resources = status.getJsonObject("resources");
    assertTrue(resources.getString("share_group").startsWith("tidemark." + NAME + "."), resources::encode);
    assertTrue(resources.getString("share_group").endsWith(".held"), resources::encode);
    int here = resources.getInteger("workers_here");
    assertTrue(here >= 1, "the share consumer of the call before: " + resources.encode());
    assertEquals(2 * here, resources.getInteger("threads_here"));
    assertTrue(resources.getInteger("workers", 0) >= 0);
    assertTrue(resources.containsKey("last_used_at"), resources::encode);
    assertFalse(resources.containsKey("removed_if_unused_until"), "consumers are never removed here: " + resources.encode());
    String dlq = TestDatabases.strings(infra, DB, "SELECT coalesce(dead_letter_topic, '') FROM tidemark.event_consumer WHERE name = 'held'").get(0);
    assertEquals(dlq.isEmpty() ? null : dlq, resources.getString("dead_letter_topic"), resources::encode);
    assertTrue(created.getBoolean("created"));
  }

  /** Two nodes sweeping at once: each consumer is claimed by one of them, and a claim is skipped until it is stale. */
  @Test
  void twoNodesClaimingAtOnceNeverClaimTheSameConsumer() throws Exception {
    String db = "consumer_claim_it";
    ServiceHarness.prepareDatabase(infra, db);
    sql(infra, db, "DELETE FROM tidemark.event_consumer",
        "INSERT INTO tidemark.event_consumer (owner, name, group_id, tables, lease_seconds, last_used_at, remove_requested_at)"
            + " SELECT 'o', 'c' || g, 'g' || g, '{t}', 10, now() - interval '1 hour', CASE WHEN g % 2 = 0 THEN now() END"
            + " FROM generate_series(1, 40) g");
    Map<ConfigKey, String> values = ServiceHarness.config(infra, "query");
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    Vertx vertx = Vertx.vertx();
    try {
      Pool pool = Pools.create(vertx, TidemarkConfig.from(values).database());
      ConsumerStore store = new ConsumerStore(pool, "claim");
      List<Future<List<Claimed>>> sweeps = new ArrayList<>();
      for (int node = 0; node < 4; node++) {
        sweeps.add(store.claim("node-" + node, 60, 300, 15));
      }
      Future.all(sweeps).await(30, TimeUnit.SECONDS);
      Set<String> claimed = new HashSet<>();
      int total = 0;
      for (Future<List<Claimed>> sweep : sweeps) {
        for (Claimed c : sweep.result()) {
          assertTrue(claimed.add(c.group()), c.group() + " claimed twice");
          assertEquals(Integer.parseInt(c.group().substring(1)) % 2 == 0, c.requested(), c::toString);
          total++;
        }
      }
      assertEquals(40, total, "every idle or requested consumer, once");
      // a claim is not taken over while fresh, and is once stale
      assertTrue(store.claim("late", 60, 300, 50).await(30, TimeUnit.SECONDS).isEmpty());
      sql(infra, db, "UPDATE tidemark.event_consumer SET removing_since = now() - interval '10 minutes' WHERE group_id = 'g1'");
      List<Claimed> stale = store.claim("late", 60, 300, 50).await(30, TimeUnit.SECONDS);
      assertEquals(List.of("g1"), stale.stream().map(Claimed::group).toList());
      // and one used within the idle time is not claimed at all
      sql(infra, db, "UPDATE tidemark.event_consumer SET removing_since = NULL, removing_node = NULL, last_used_at = now()"
          + " WHERE group_id = 'g3'");
      assertTrue(store.claim("late", 60, 300, 50).await(30, TimeUnit.SECONDS).isEmpty());
    } finally {
      vertx.close().await(30, TimeUnit.SECONDS);
    }
  }
}
