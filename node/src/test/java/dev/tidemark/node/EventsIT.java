package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The events tools on one node with every role, against the suite's PostgreSQL and Kafka (whose
 * broker allows locks from 1 s): leases, acks and nacks, lapsed leases, dead letters and their
 * re-drive, refused tokens, ownership, administrators, fixed settings, access, and bounds.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventsIT {

  static final String DB = "events_it";
  static final String NAME = "evit";
  static final Duration WAIT = Duration.ofSeconds(60);
  private static final AtomicInteger IDS = new AtomicInteger((int) (System.nanoTime() & 0xfffff));

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient writer;
  private McpHttpClient reader;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "CREATE TABLE IF NOT EXISTS public.ev_orders (id int PRIMARY KEY, v int, secret text)",
        "CREATE TABLE IF NOT EXISTS public.ev_other (id int PRIMARY KEY)",
        "CREATE TABLE IF NOT EXISTS public.ev_reaction (id int PRIMARY KEY, consumer text NOT NULL)",
        "GRANT SELECT, INSERT ON public.ev_reaction TO tidemark_writer",
        "REVOKE ALL ON public.ev_orders FROM tidemark_reader",
        "GRANT SELECT (id, v) ON public.ev_orders TO tidemark_reader",
        "GRANT SELECT ON public.ev_orders, public.ev_other TO tidemark_writer");
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DB), ConfigKey.DATABASE_NAME, NAME,
        ConfigKey.CHANGELOG_RELAY_POLL_MS, "200", ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1",
        ConfigKey.EVENTS_MAX_DELIVERIES, "2", ConfigKey.EVENTS_ADMIN_ROLES, DevSetup.WRITER_ROLE));
    writer = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
    writer.initialize();
    reader = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN);
    reader.initialize();
  }

  @AfterAll
  void stop() throws Exception {
    if (writer != null) {
      writer.close();
    }
    if (reader != null) {
      reader.close();
    }
    TestNodes.stop(node);
  }

  static JsonObject next(String consumer, String table, int leaseSeconds) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add(table)).put("lease_seconds", leaseSeconds)
        .put("wait_ms", 500);
  }

  /** Creates the consumer: it delivers what is committed from then on. */
  private JsonObject create(McpHttpClient client, String consumer, String table, int leaseSeconds) {
    JsonObject first = ToolResults.ok(client, "events_next", next(consumer, table, leaseSeconds).put("wait_ms", 0));
    assertTrue(first.getBoolean("created"), first::encode);
    return first;
  }

  private int insert(String table) {
    int id = IDS.incrementAndGet();
    sql(infra, DB, "INSERT INTO public." + table + " VALUES (" + id + (table.equals("ev_orders") ? ", 1, 'classified'" : "") + ")");
    return id;
  }

  /** Leases until an event of row {@code id} matching {@code wanted} comes; other events are acknowledged. */
  static JsonObject await(McpHttpClient client, JsonObject args, int id, Predicate<JsonObject> wanted) {
    AtomicReference<JsonObject> found = new AtomicReference<>();
    ChangelogFixtures.await("an event of row " + id, WAIT, () -> {
      JsonObject out = ToolResults.ok(client, "events_next", args);
      for (Object o : out.getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        if (keyOf(e) == id && wanted.test(e) && found.get() == null) {
          found.set(e);
        } else {
          ToolResults.ok(client, "events_ack", new JsonObject().put("consumer", args.getString("consumer"))
              .put("event_ids", new JsonArray().add(e.getString("event_id"))).put("lease_token", e.getString("lease_token")));
        }
      }
      return found.get() != null;
    });
    return found.get();
  }

  /** A new consumer of ev_orders, a row inserted after its creation, and that row's first event. */
  private record Leased(JsonObject args, int id, JsonObject event) {}

  private Leased leaseNew(McpHttpClient client, String consumer, int leaseSeconds) {
    JsonObject args = next(consumer, "ev_orders", leaseSeconds);
    create(client, consumer, "ev_orders", leaseSeconds);
    int id = insert("ev_orders");
    return new Leased(args, id, await(client, args, id, e -> true));
  }

  static int keyOf(JsonObject event) {
    Object key = event.getJsonObject("change").getValue("key");
    return key instanceof JsonArray a ? a.getInteger(0) : ((JsonObject) key).getInteger("id");
  }

  static JsonObject ackArgs(String consumer, JsonObject event) {
    return new JsonObject().put("consumer", consumer).put("event_ids", new JsonArray().add(event.getString("event_id")))
        .put("lease_token", event.getString("lease_token"));
  }

  /** Leases for {@code ms} and returns the events of row {@code id} seen meanwhile (acking each). */
  static List<JsonObject> seenFor(McpHttpClient client, JsonObject args, int id, long ms) {
    List<JsonObject> seen = new ArrayList<>();
    long deadline = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < deadline) {
      for (Object o : ToolResults.ok(client, "events_next", args).getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        if (keyOf(e) == id) {
          seen.add(e);
        }
        ToolResults.ok(client, "events_ack", ackArgs(args.getString("consumer"), e));
      }
    }
    return seen;
  }

  @Test
  void aConsumerThatFallsBehindShowsItsLagOnMetrics() {
    Leased leased = leaseNew(writer, "lag-metric", 10);
    ToolResults.ok(writer, "events_ack", ackArgs("lag-metric", leased.event()));
    for (int i = 0; i < 3; i++) {
      insert("ev_orders");
    }
    java.util.regex.Pattern gauge = java.util.regex.Pattern.compile(
        "tidemark_events_consumer_lag\\{group=\"tidemark\\.[a-z0-9_]+\\.[0-9a-f]{16}\\.lag-metric\"\\} ([0-9.E]+)");
    ChangelogFixtures.await("the consumer's lag of 3 on /metrics", WAIT.plusSeconds(30), () -> {
      java.util.regex.Matcher m = gauge.matcher(MetricsIT.scrape(node));
      return m.find() && Double.parseDouble(m.group(1)) >= 3;
    });
  }

  @Test
  void anAckedEventIsNotDeliveredAgain() {
    Leased leased = leaseNew(writer, "ack-once", 10);
    JsonObject event = leased.event();
    assertEquals(1, event.getInteger("delivery_count"));
    JsonObject change = event.getJsonObject("change");
    assertEquals("ev_orders", change.getString("table"));
    assertEquals("INSERT", change.getString("op"));
    assertEquals("classified", change.getJsonObject("after").getString("secret"));
    assertNotNull(change.getString("committed_at"));
    assertNotNull(change.getString("transaction"));
    assertEquals(1, ToolResults.ok(writer, "events_ack", ackArgs("ack-once", event)).getInteger("acknowledged"));
    assertEquals(1, ToolResults.ok(writer, "events_ack", ackArgs("ack-once", event)).getInteger("acknowledged"), "an ack again is idempotent");
    assertTrue(seenFor(writer, leased.args(), leased.id(), 2500).isEmpty(), "acknowledged: never again");
    JsonObject status = ToolResults.ok(writer, "events_status", new JsonObject().put("consumer", "ack-once"));
    assertTrue(status.getLong("delivered") >= 1, status::encode);
    assertEquals(0, status.getLong("dead_lettered"));
  }

  @Test
  void aNackedEventComesAgainWithDeliveryCountTwoAndTheSameId() {
    Leased leased = leaseNew(writer, "nacker", 10);
    JsonObject first = leased.event();
    assertEquals(1, ToolResults.ok(writer, "events_nack", ackArgs("nacker", first)).getInteger("released"));
    JsonObject again = await(writer, leased.args(), leased.id(), e -> true);
    assertEquals(2, again.getInteger("delivery_count"), again::encode);
    assertEquals(first.getString("event_id"), again.getString("event_id"));
    ToolResults.ok(writer, "events_ack", ackArgs("nacker", again));
    JsonObject status = ToolResults.ok(writer, "events_status", new JsonObject().put("consumer", "nacker"));
    assertTrue(status.getLong("redelivered") >= 1, status::encode);
  }

  @Test
  void anAckAfterTheLeaseLapsedIsLeaseExpiredAndTheEventComesAgain() {
    Leased leased = leaseNew(writer, "lapser", 2);
    JsonObject first = leased.event();
    assertTrue(Instant.parse(ToolResults.ok(writer, "events_status", new JsonObject().put("consumer", "lapser"))
        .getString("created_at").replace("+00:00", "Z")).isBefore(Instant.now()));
    JsonObject again = await(writer, leased.args(), leased.id(), e -> e.getInteger("delivery_count") >= 2);
    ToolResults.error(writer, "events_ack", ackArgs("lapser", first), "LEASE_EXPIRED");
    ToolResults.ok(writer, "events_ack", ackArgs("lapser", again));
  }

  // ---- reactions bound to their events (caused_by) ----

  private static JsonObject reaction(String consumer, int id, JsonObject event) {
    return new JsonObject().put("table", "ev_reaction").put("rows", new JsonArray().add(new JsonObject().put("id", id).put("consumer", consumer)))
        .put("caused_by", new JsonObject().put("consumer", consumer).put("event_id", event.getString("event_id"))
            .put("lease_token", event.getString("lease_token")));
  }

  private JsonObject planAndCommit(JsonObject args) {
    JsonObject plan = ToolResults.ok(writer, "insert_rows", args);
    assertEquals("plan", plan.getString("mode"), plan::encode);
    return ToolResults.ok(writer, "insert_rows", args.copy().put("plan_id", plan.getString("plan_id")));
  }

  private long reactions(int id) {
    return Long.parseLong(ChangelogFixtures.strings(infra, DB, "SELECT count(*) FROM public.ev_reaction WHERE id = " + id).get(0));
  }

  @Test
  void aWorkerKilledBetweenCommitAndAckGetsTheEventAgainAndItsReactionReplays() {
    Leased leased = leaseNew(writer, "reactor", 2);
    JsonObject committed = planAndCommit(reaction("reactor", leased.id(), leased.event()));
    assertEquals("commit", committed.getString("mode"));
    assertFalse(committed.getBoolean("replayed"));
    assertEquals(1, reactions(leased.id()));
    // the worker dies here, before its ack: the lease lapses and the event comes again, to whoever leases next
    JsonObject again = await(writer, leased.args(), leased.id(), e -> e.getInteger("delivery_count") >= 2);
    assertEquals(leased.event().getString("event_id"), again.getString("event_id"));
    JsonObject redo = reaction("reactor", leased.id(), again);
    redo.getJsonObject("caused_by").put("ack", true);
    JsonObject replayed = ToolResults.ok(writer, "insert_rows", redo);
    assertTrue(replayed.getBoolean("replayed"), replayed::encode);
    assertEquals(true, replayed.getBoolean("acknowledged"), replayed::encode);
    assertEquals(1, reactions(leased.id()), "the reaction was applied once");
    assertTrue(seenFor(writer, leased.args(), leased.id(), 2500).isEmpty(), "acknowledged with the replay: never again");

    // the changelog records which event the reaction answered
    ChangelogFixtures.awaitDecoded(infra, DB);
    JsonObject page = ToolResults.ok(writer, "changes_since", new JsonObject().put("tables", new JsonArray().add("ev_reaction")).put("limit", 1000));
    JsonObject change = page.getJsonArray("changes").stream().map(JsonObject.class::cast)
        .filter(c -> c.getJsonObject("after").getInteger("id") == leased.id()).findFirst().orElseThrow(() -> new AssertionError(page.encode()));
    assertEquals(new JsonObject().put("consumer", "reactor").put("event_id", leased.event().getString("event_id")),
        change.getJsonObject("caused_by"), change::encode);
  }

  @Test
  void aReactionWhoseLeaseLapsedIsLeaseExpiredAndWritesNothing() {
    Leased leased = leaseNew(writer, "late-reactor", 2);
    JsonObject args = reaction("late-reactor", leased.id(), leased.event());
    JsonObject plan = ToolResults.ok(writer, "insert_rows", args);
    JsonObject again = await(writer, leased.args(), leased.id(), e -> e.getInteger("delivery_count") >= 2);
    JsonObject refused = ToolResults.error(writer, "insert_rows", args.copy().put("plan_id", plan.getString("plan_id")), "LEASE_EXPIRED");
    assertEquals("caused_by", refused.getString("argument"), refused::encode);
    assertEquals(0, reactions(leased.id()));
    ToolResults.ok(writer, "events_ack", ackArgs("late-reactor", again));
  }

  @Test
  void aCommitCanAcknowledgeItsEventAndForgedCausesAreRefused() {
    Leased leased = leaseNew(writer, "acking-reactor", 10);
    JsonObject args = reaction("acking-reactor", leased.id(), leased.event());
    JsonObject forged = args.copy();
    forged.getJsonObject("caused_by").put("lease_token", "forged");
    JsonObject plan = ToolResults.ok(writer, "insert_rows", forged);
    ToolResults.error(writer, "insert_rows", forged.copy().put("plan_id", plan.getString("plan_id")), "INVALID_LEASE");
    ToolResults.error(writer, "insert_rows", args.copy().put("idempotency_key", "mine"), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "insert_rows", new JsonObject().put("table", "ev_reaction").put("rows", args.getJsonArray("rows"))
        .put("idempotency_key", "event:acking-reactor:" + leased.event().getString("event_id")).put("plan_id", plan.getString("plan_id")),
        "INVALID_ARGUMENTS");
    JsonObject badId = args.copy();
    badId.getJsonObject("caused_by").put("event_id", "not-an-id");
    ToolResults.error(writer, "insert_rows", badId, "INVALID_ARGUMENTS");
    assertEquals(0, reactions(leased.id()), "nothing was written");

    args.getJsonObject("caused_by").put("ack", true);
    JsonObject documented = DocsTest.jsonExample("change-tools.md", "## Reactions bound to their events");
    assertEquals(documented.getJsonObject("caused_by").fieldNames(), args.getJsonObject("caused_by").fieldNames(),
        "docs/change-tools.md shows the reaction's caused_by");
    JsonObject committed = planAndCommit(args);
    assertEquals(true, committed.getBoolean("acknowledged"), committed::encode);
    assertEquals(1, reactions(leased.id()));
    assertTrue(seenFor(writer, leased.args(), leased.id(), 2500).isEmpty(), "acknowledged with the commit: never again");
  }

  @Test
  void anEventPastTheDeliveryLimitIsDeadLetteredShownByStatusAndReDrivenBySeek() throws Exception {
    Leased leased = leaseNew(writer, "dead", 10);
    JsonObject one = leased.event();
    ToolResults.error(reader, "events_seek", new JsonObject().put("consumer", "dead").put("to", "dead_letters"), "PERMISSION_DENIED");
    deadLetterThenReDrive(writer, leased.args(), leased.id(), one);
    try (var c = ChangelogFixtures.jdbc(infra, DB); var rs = c.createStatement().executeQuery(
        "SELECT dead_letter_topic FROM tidemark.event_consumer WHERE name = 'dead'")) {
      assertTrue(rs.next());
      assertTrue(String.valueOf(rs.getString(1)).startsWith("dlq.tidemark." + NAME + "."),
          "the broker's dead-letter topic (Kafka 4.4, share.version 2): " + rs.getString(1));
    }
  }

  /**
   * Hands {@code first} (delivery 1 of row {@code id}) back until it is dead-lettered (the node's
   * events.max-deliveries is 2), sees it counted by events_status, re-drives it with events_seek
   * (the caller is an events administrator), and acknowledges it when it comes again.
   */
  static void deadLetterThenReDrive(McpHttpClient admin, JsonObject args, int id, JsonObject first) {
    String consumer = args.getString("consumer");
    ToolResults.ok(admin, "events_nack", ackArgs(consumer, first));
    JsonObject two = await(admin, args, id, e -> e.getInteger("delivery_count") == 2);
    ToolResults.ok(admin, "events_nack", ackArgs(consumer, two));
    ChangelogFixtures.await("the dead letter", WAIT, () -> {
      assertTrue(seenFor(admin, args, id, 500).isEmpty(), "a third delivery is not shown: max-deliveries is 2");
      return ToolResults.ok(admin, "events_status", new JsonObject().put("consumer", consumer)).getLong("dead_lettered") == 1;
    });
    JsonObject seek = ToolResults.ok(admin, "events_seek", new JsonObject().put("consumer", consumer).put("to", "dead_letters"));
    assertEquals(1, seek.getInteger("redriven"), seek::encode);
    JsonObject redriven = await(admin, args, id, e -> true);
    assertEquals(1, redriven.getInteger("delivery_count"), "a re-driven event starts again: " + redriven.encode());
    assertEquals(first.getString("event_id"), redriven.getString("event_id"));
    ToolResults.ok(admin, "events_ack", ackArgs(consumer, redriven));
    JsonObject status = ToolResults.ok(admin, "events_status", new JsonObject().put("consumer", consumer));
    assertEquals(0, status.getLong("dead_lettered"), status::encode);
    assertEquals(1, status.getLong("redriven"), status::encode);
  }

  @Test
  void forgedForeignAndMismatchedLeaseTokensAreRefusedAndChangeNothing() {
    create(writer, "tokens-other", "ev_orders", 20);
    Leased leased = leaseNew(writer, "tokens", 20);
    JsonObject event = leased.event();
    String token = event.getString("lease_token");
    ToolResults.error(writer, "events_ack", ackArgs("tokens", event).put("lease_token", "forged" + token.substring(6)), "INVALID_LEASE");
    ToolResults.error(writer, "events_ack", ackArgs("tokens", event).put("lease_token", "not-a-token"), "INVALID_LEASE");
    ToolResults.error(writer, "events_ack", ackArgs("tokens-other", event), "INVALID_LEASE");
    ToolResults.error(reader, "events_ack", ackArgs("tokens", event), "INVALID_LEASE");
    ToolResults.error(writer, "events_nack", ackArgs("tokens", event).put("event_ids", new JsonArray().add(event.getString("event_id"))
        .add("1-1")), "INVALID_LEASE");
    assertEquals(1, ToolResults.ok(writer, "events_ack", ackArgs("tokens", event)).getInteger("acknowledged"),
        "the lease still holds after every refusal");
    assertTrue(seenFor(writer, leased.args(), leased.id(), 2000).isEmpty(), "and nothing was handed back");
  }

  @Test
  void aConsumerNameReachesOnlyItsOwnersConsumerAndItsSettingsAreFixedAtCreation() {
    create(writer, "owned", "ev_orders", 10);
    ToolResults.error(reader, "events_status", new JsonObject().put("consumer", "owned"), "NOT_FOUND");
    JsonObject readers = ToolResults.ok(reader, "events_next", next("owned", "ev_other", 5).put("wait_ms", 0));
    assertTrue(readers.getBoolean("created"), "the reader's consumer of that name is its own: " + readers.encode());
    JsonObject tables = ToolResults.error(writer, "events_next", next("owned", "ev_other", 10), "INVALID_ARGUMENTS");
    assertTrue(tables.getString("message").contains("[ev_orders]"), tables::encode);
    JsonObject lease = ToolResults.error(writer, "events_next", next("owned", "ev_orders", 20), "INVALID_ARGUMENTS");
    assertTrue(lease.getString("message").contains("lease_seconds 10"), lease::encode);
    assertFalse(ToolResults.ok(writer, "events_next", next("owned", "ev_orders", 10).put("wait_ms", 0)).getBoolean("created"));
    ToolResults.error(reader, "events_seek", new JsonObject().put("consumer", "owned").put("to", "latest"), "PERMISSION_DENIED");
    ToolResults.error(writer, "events_seek", new JsonObject().put("consumer", "owned").put("to", "yesterday"), "INVALID_ARGUMENTS");
    ToolResults.ok(writer, "events_seek", new JsonObject().put("consumer", "owned").put("to", "latest"));
    JsonObject back = ToolResults.ok(writer, "events_seek", new JsonObject().put("consumer", "owned")
        .put("to", Instant.now().minusSeconds(3600).toString()));
    assertEquals(1, back.getJsonArray("position").size(), back::encode);
    ToolResults.ok(writer, "events_seek", new JsonObject().put("consumer", "owned").put("to", "earliest"));
    assertEquals(0, ToolResults.ok(writer, "events_seek", new JsonObject().put("consumer", "owned").put("to", "dead_letters"))
        .getInteger("redriven"), "no dead letters: nothing moves");
  }

  @Test
  void anEventShowsOnlyTheColumnsAndRowsTheCallersRoleMayRead() {
    Leased leased = leaseNew(reader, "columns", 10);
    JsonObject event = leased.event();
    JsonObject after = event.getJsonObject("change").getJsonObject("after");
    assertEquals(leased.id(), after.getInteger("id"));
    assertFalse(after.containsKey("secret"), "a column the reader may not read: " + event.encode());
    ToolResults.ok(reader, "events_ack", ackArgs("columns", event));

    JsonObject notes = next("notes", "agent_notes", 10);
    create(reader, "notes", "agent_notes", 10);
    sql(infra, DB, "INSERT INTO public.agent_notes (owner, body) VALUES ('dev-read-write', 'EV writer secret')",
        "INSERT INTO public.agent_notes (owner, body) VALUES ('dev-read-only', 'EV for the reader')");
    StringBuilder shown = new StringBuilder();
    ChangelogFixtures.await("the reader's own note", WAIT, () -> {
      for (Object o : ToolResults.ok(reader, "events_next", notes).getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        shown.append(e.encode());
        ToolResults.ok(reader, "events_ack", ackArgs("notes", e));
      }
      return shown.toString().contains("EV for the reader");
    });
    assertFalse(shown.toString().contains("EV writer secret"), "another owner's row under row-level security: " + shown);
  }

  /** Retention removing records before the consumer read them, made at once with deleteRecords. */
  @Test
  void changesTheTopicNoLongerHoldsAreCountedAsMissedByStatus() throws Exception {
    Leased leased = leaseNew(writer, "slow", 10);
    ToolResults.ok(writer, "events_ack", ackArgs("slow", leased.event()));
    int last = 0;
    for (int i = 0; i < 3; i++) {
      last = insert("ev_orders");
    }
    ChangelogFixtures.awaitDecoded(infra, DB);
    String topic = node.config().kafka().topicFor(NAME);
    try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
        Map.of("bootstrap.servers", infra.kafkaBootstrapServers()))) {
      ChangelogFixtures.await("the three records on the topic", WAIT, () -> {
        try {
          long end = admin.listOffsets(Map.of(new org.apache.kafka.common.TopicPartition(topic, 0),
              org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get().values().iterator().next().offset();
          JsonObject status = ToolResults.ok(writer, "events_status", new JsonObject().put("consumer", "slow"));
          long position = status.getJsonArray("position").getJsonObject(0).getLong("offset");
          return end - position >= 3;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      long end = admin.listOffsets(Map.of(new org.apache.kafka.common.TopicPartition(topic, 0),
          org.apache.kafka.clients.admin.OffsetSpec.latest())).all().get().values().iterator().next().offset();
      admin.deleteRecords(Map.of(new org.apache.kafka.common.TopicPartition(topic, 0),
          org.apache.kafka.clients.admin.RecordsToDelete.beforeOffset(end))).all().get();
    }
    JsonObject status = ToolResults.ok(writer, "events_status", new JsonObject().put("consumer", "slow"));
    assertTrue(status.getLong("missed") >= 3, status::encode);
    assertTrue(seenFor(writer, leased.args(), last, 1500).isEmpty(), "a removed change cannot come");
  }

  @Test
  void badBoundsAndNamesAreInvalidArguments() {
    ToolResults.error(writer, "events_next", next("bounds", "ev_orders", 10).put("max", 0), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", next("bounds", "ev_orders", 10).put("max", 501), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", next("bounds", "ev_orders", 0), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", next("bounds", "ev_orders", 10).put("wait_ms", 60_000), "INVALID_ARGUMENTS");
    JsonObject broker = ToolResults.error(writer, "events_next", next("bounds", "ev_orders", 3600), "INVALID_ARGUMENTS");
    assertEquals("lease_seconds", broker.getString("argument"), broker::encode);
    ToolResults.error(writer, "events_status", new JsonObject().put("consumer", "bounds"), "NOT_FOUND");
    ToolResults.error(writer, "events_next", next("Bad Name", "ev_orders", 10), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", next("x".repeat(64), "ev_orders", 10), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_nack", new JsonObject().put("consumer", "bounds").put("event_ids", new JsonArray().add("1-1"))
        .put("lease_token", "t").put("retry_after_seconds", 5), "INVALID_ARGUMENTS");
  }
}
