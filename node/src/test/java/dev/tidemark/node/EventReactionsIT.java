package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Events on one node with every role, where they meet the other roles: a reaction committed with
 * insert_rows bound to the event it answers (replayed, refused when its lease lapsed, acknowledging
 * the event), and a consumer's lag on the node's /metrics. The events tools alone are tested in
 * the query module ({@code EventsIT}).
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EventReactionsIT {

  static final String DB = "event_reactions_it";
  static final String NAME = "erit";
  static final Duration WAIT = Duration.ofSeconds(60);
  private static final AtomicInteger IDS = new AtomicInteger((int) (System.nanoTime() & 0xfffff));

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient writer;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    Map<ConfigKey, String> settings = TestNodes.servingDatabase(infra, DB,
        "CREATE TABLE IF NOT EXISTS public.ev_orders (id int PRIMARY KEY, v int, secret text)",
        "CREATE TABLE IF NOT EXISTS public.ev_reaction (id int PRIMARY KEY, consumer text NOT NULL)",
        "GRANT SELECT, INSERT ON public.ev_reaction TO tidemark_writer",
        "GRANT SELECT ON public.ev_orders TO tidemark_writer");
    settings.putAll(Map.of(ConfigKey.DATABASE_NAME, NAME,
        ConfigKey.EVENTS_MAX_DELIVERIES, "2", ConfigKey.EVENTS_ADMIN_ROLES, DevSetup.WRITER_ROLE));
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", settings);
    writer = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
    writer.initialize();
  }

  @AfterAll
  void stop() throws Exception {
    if (writer != null) {
      writer.close();
    }
    TestNodes.stop(node);
  }

  /** Creates the consumer: it delivers what is committed from then on. */
  private JsonObject create(McpHttpClient client, String consumer, String table, int leaseSeconds) {
    JsonObject first = ToolResults.ok(client, "events_next", Events.next(consumer, table, leaseSeconds).put("wait_ms", 0));
    assertTrue(first.getBoolean("created"), first::encode);
    return first;
  }

  private int insert(String table) {
    int id = IDS.incrementAndGet();
    sql(infra, DB, "INSERT INTO public." + table + " VALUES (" + id + (table.equals("ev_orders") ? ", 1, 'classified'" : "") + ")");
    return id;
  }

  /** A new consumer of ev_orders, a row inserted after its creation, and that row's first event. */
  private record Leased(JsonObject args, int id, JsonObject event) {}

  private Leased leaseNew(McpHttpClient client, String consumer, int leaseSeconds) {
    JsonObject args = Events.next(consumer, "ev_orders", leaseSeconds);
    create(client, consumer, "ev_orders", leaseSeconds);
    int id = insert("ev_orders");
    return new Leased(args, id, Events.await(client, args, id, e -> true));
  }

  @Test
  void aConsumerThatFallsBehindShowsItsLagOnMetrics() {
    Leased leased = leaseNew(writer, "lag-metric", 10);
    ToolResults.ok(writer, "events_ack", Events.ackArgs("lag-metric", leased.event()));
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
    JsonObject again = Events.await(writer, leased.args(), leased.id(), e -> e.getInteger("delivery_count") >= 2);
    assertEquals(leased.event().getString("event_id"), again.getString("event_id"));
    JsonObject redo = reaction("reactor", leased.id(), again);
    redo.getJsonObject("caused_by").put("ack", true);
    JsonObject replayed = ToolResults.ok(writer, "insert_rows", redo);
    assertTrue(replayed.getBoolean("replayed"), replayed::encode);
    assertEquals(true, replayed.getBoolean("acknowledged"), replayed::encode);
    assertEquals(1, reactions(leased.id()), "the reaction was applied once");
    assertTrue(Events.seenFor(writer, leased.args(), leased.id(), 2500).isEmpty(), "acknowledged with the replay: never again");

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
    JsonObject again = Events.await(writer, leased.args(), leased.id(), e -> e.getInteger("delivery_count") >= 2);
    JsonObject refused = ToolResults.error(writer, "insert_rows", args.copy().put("plan_id", plan.getString("plan_id")), "LEASE_EXPIRED");
    assertEquals("caused_by", refused.getString("argument"), refused::encode);
    assertEquals(0, reactions(leased.id()));
    ToolResults.ok(writer, "events_ack", Events.ackArgs("late-reactor", again));
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
    assertTrue(Events.seenFor(writer, leased.args(), leased.id(), 2500).isEmpty(), "acknowledged with the commit: never again");
  }

  /** The events tools' input schema, checked by the gateway before any role sees a call. */
  @Test
  void badBoundsAndNamesAreInvalidArgumentsAtTheGateway() {
    ToolResults.error(writer, "events_next", Events.next("bounds", "ev_orders", 10).put("max", 0), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", Events.next("bounds", "ev_orders", 10).put("max", 501), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", Events.next("bounds", "ev_orders", 0), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", Events.next("bounds", "ev_orders", 10).put("wait_ms", 60_000), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", Events.next("Bad Name", "ev_orders", 10), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_next", Events.next("x".repeat(64), "ev_orders", 10), "INVALID_ARGUMENTS");
    ToolResults.error(writer, "events_nack", new JsonObject().put("consumer", "bounds").put("event_ids", new JsonArray().add("1-1"))
        .put("lease_token", "t").put("retry_after_seconds", 5), "INVALID_ARGUMENTS");
  }
}
