package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SocketRelay;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import java.nio.file.Path;

/**
 * database.changelog-url: a node whose served database held the changelog moves it, with its ids
 * and positions, into the changelog's own database at its relay's first start there; from then on
 * no decoded change is written into the served database, and changes_since, undo_transaction and
 * status read the changelog where it is stored, with every cursor given out before still valid.
 */
@ExtendWith(InfraExtension.class)
class SeparateChangelogIT {

  private static final String SERVED = "sepstore_served_it";
  private static final String STORE = "sepstore_store_it";

  @Test
  void theChangelogMovesToItsOwnDatabaseAndTheServedOneOnlyDecodes(SharedInfra infra) throws Exception {
    ChangelogFixtures.prepare(infra, SERVED);
    infra.postgres().createDatabaseIfMissing(STORE);
    TestDatabases.sql(infra, STORE, "DROP SCHEMA IF EXISTS tidemark CASCADE");
    TestDatabases.sql(infra, SERVED, "DROP TABLE IF EXISTS public.sep_items", "CREATE TABLE public.sep_items (id int PRIMARY KEY, v text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.sep_items TO " + DevSetup.WRITER_ROLE,
        "GRANT SELECT ON public.sep_items TO " + DevSetup.READER_ROLE,
        "DROP TABLE IF EXISTS public.sep_writes", "CREATE TABLE public.sep_writes (id int PRIMARY KEY)");
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> config = ChangelogFixtures.config(infra, SERVED, "sepstore", TestNodes.clusterName(), port,
        "127.0.0.1:" + port, "gateway,query,command,changelog");

    // before: the changelog in the served database, as every database had it; a writer commits
    // throughout, before the stop, while no node runs, and across the move
    TidemarkNode node = TestNodes.startCaughtUp(config);
    java.util.concurrent.atomic.AtomicBoolean writing = new java.util.concurrent.atomic.AtomicBoolean(true);
    java.util.concurrent.CompletableFuture<Integer> writer = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
      int n = 0;
      try (java.sql.Connection w = TestDatabases.jdbc(infra, SERVED); var st = w.prepareStatement("INSERT INTO public.sep_writes VALUES (?)")) {
        while (writing.get()) {
          st.setInt(1, ++n);
          st.executeUpdate();
          Thread.sleep(5);
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      return n;
    });
    String head;
    List<String> before = new ArrayList<>();
    try {
      McpHttpClient c = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
      head = ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head");
      TestDatabases.sql(infra, SERVED, "INSERT INTO public.sep_items VALUES (1, 'one')");
      ChangelogFixtures.awaitDecoded(infra, SERVED);
      before.addAll(positions(ToolResults.ok(c, "changes_since", new JsonObject().put("cursor", head).put("tables", new JsonArray().add("sep_items")))));
      assertEquals(1, before.size(), before.toString());
    } catch (RuntimeException | AssertionError e) {
      writing.set(false);
      throw e;
    } finally {
      TestNodes.stop(node);
    }
    long servedRows = TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog");
    long servedLast = TestDatabases.count(infra, SERVED, "SELECT max(id) FROM tidemark.changelog");
    assertTrue(servedRows >= 1, "the served database held the changelog before");

    // after: the same database with the changelog stored apart
    config.put(ConfigKey.DATABASE_CHANGELOG_URL, infra.postgres().url(STORE));
    node = TestNodes.start(config);
    try {
      awaitDecoded(infra);
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog"),
          "what the served database held was moved out of it");
      assertEquals(servedRows, TestDatabases.count(infra, STORE, "SELECT count(*) FROM tidemark.changelog WHERE id <= " + servedLast),
          "every change the served database held is in the store, once, with its id");
      writing.set(false);
      int written = writer.get(60, java.util.concurrent.TimeUnit.SECONDS);
      awaitDecoded(infra);
      assertEquals(List.of(written + " " + written + " " + written), TestDatabases.strings(infra, STORE, "SELECT count(*) || ' '"
          + " || count(DISTINCT after->>'id') || ' ' || max((after->>'id')::int) FROM tidemark.changelog WHERE table_name = 'sep_writes'"),
          "each of the writer's rows, committed before, during and after the move, is in the changelog once");
      McpHttpClient c = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
      JsonObject args = new JsonObject().put("cursor", head).put("tables", new JsonArray().add("sep_items"));
      assertEquals(before, positions(ToolResults.ok(c, "changes_since", args)), "a cursor given out before reads the same changes");

      TestDatabases.sql(infra, SERVED, "INSERT INTO public.sep_items VALUES (2, 'two')", "UPDATE public.sep_items SET v = 'changed' WHERE id = 1");
      awaitDecoded(infra);
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog"), "no decoded change is written back");
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog_commit"));
      JsonArray changes = ToolResults.ok(c, "changes_since", args).getJsonArray("changes");
      assertEquals(3, changes.size(), changes.encodePrettily());
      JsonObject update = changes.getJsonObject(2);
      assertEquals("UPDATE", update.getString("op"));
      assertEquals("one", update.getJsonObject("before").getString("v"));
      assertTrue(ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head") != null);

      // undo reads the update's before-image from the store
      JsonObject undo = new JsonObject().put("transaction", update.getString("transaction"));
      JsonObject plan = ToolResults.ok(c, "undo_transaction", undo);
      ToolResults.ok(c, "undo_transaction", undo.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "sepstore-undo-1"));
      assertEquals(List.of("one"), TestDatabases.strings(infra, SERVED, "SELECT v FROM public.sep_items WHERE id = 1"));
      awaitDecoded(infra);
      JsonArray after = ToolResults.ok(c, "changes_since", args).getJsonArray("changes");
      assertEquals(4, after.size(), after.encodePrettily());
      assertEquals("undo_transaction", after.getJsonObject(3).getString("tool"), "the undo is attributed from the store");
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.change_attribution"));
    } finally {
      writing.set(false);
      TestNodes.stop(node);
    }
  }

  /**
   * With the changelog's database gone (its host cut off by a relay in front of it): readiness says
   * so, changes_since answers UNAVAILABLE, the slot is not confirmed past what was stored, and once
   * it is back every change made meanwhile is there once. Watches and events read it there too.
   */
  @Test
  void aChangelogDatabaseThatGoesAwayHoldsTheSlotAndLosesNothing(SharedInfra infra) {
    String served = SERVED + "_away";
    String store = STORE + "_away";
    ChangelogFixtures.prepare(infra, served);
    infra.postgres().createDatabaseIfMissing(store);
    TestDatabases.sql(infra, store, "DROP SCHEMA IF EXISTS tidemark CASCADE");
    TestDatabases.sql(infra, served, "DROP TABLE IF EXISTS public.sep_items", "CREATE TABLE public.sep_items (id int PRIMARY KEY, v text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.sep_items TO " + DevSetup.WRITER_ROLE,
        "GRANT SELECT ON public.sep_items TO " + DevSetup.READER_ROLE);
    int[] ports = dev.tidemark.devstack.FreePorts.allocate(2);
    try (SocketRelay relay = SocketRelay.open(ports[1], infra.postgres().port())) {
      Map<ConfigKey, String> config = ChangelogFixtures.config(infra, served, "sepaway", TestNodes.clusterName(), ports[0],
          "127.0.0.1:" + ports[0], "gateway,query,command,changelog");
      config.put(ConfigKey.DATABASE_CHANGELOG_URL, "postgresql://127.0.0.1:" + relay.port() + "/" + store);
      TidemarkNode node = TestNodes.start(config);
      try {
        awaitDecoded(infra, served, store);
        McpHttpClient c = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
        String head = ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head");
        JsonObject watch = new JsonObject().put("table", "sep_items");
        String cursor = ToolResults.ok(c, "watch", watch).getString("cursor");
        JsonObject events = Events.next("sepaway-worker", "sep_items", 30);
        ToolResults.ok(c, "events_next", events.copy().put("wait_ms", 0));
        TestDatabases.sql(infra, served, "INSERT INTO public.sep_items VALUES (1, 'before')");
        awaitDecoded(infra, served, store);
        JsonObject patch = ToolResults.ok(c, "watch", watch.copy().put("cursor", cursor).put("wait_ms", 5000));
        assertEquals("patch", patch.getString("kind"), patch.encode());
        assertEquals(1, patch.getJsonArray("changes").size(), patch.encode());
        JsonObject event = Events.await(c, events, 1, e -> "INSERT".equals(e.getJsonObject("change").getString("op")));
        ToolResults.ok(c, "events_ack", Events.ackArgs("sepaway-worker", event));

        relay.close();
        TestDatabases.sql(infra, served, "INSERT INTO public.sep_items VALUES (2, 'while away')");
        long inserted = TestDatabases.count(infra, served, "SELECT (pg_current_wal_lsn() - '0/0')::bigint");
        JsonObject refused = c.callTool("changes_since", new JsonObject().put("cursor", head));
        assertEquals("UNAVAILABLE", refused.getJsonObject("structuredContent").getJsonObject("error").getString("code"), refused.encode());
        assertTrue(refused.getJsonObject("structuredContent").getJsonObject("error").getBoolean("retriable"), refused.encode());
        Map<String, String> checks = readiness(node, 503);
        assertEquals("DOWN", checks.get("changelog-store"), checks.toString());
        assertEquals("UP", checks.get("postgres"), checks.toString());
        // the slot keeps what could not be stored, however long the relay tries
        assertFalse(Await.until(() -> confirmedLsn(infra, served) >= inserted, Duration.ofSeconds(3)),
            "the slot is not confirmed past what the store holds");

        relay.open();
        awaitDecoded(infra, served, store);
        JsonArray changes = ToolResults.ok(c, "changes_since", new JsonObject().put("cursor", head)).getJsonArray("changes");
        assertEquals(List.of("INSERT [1]", "INSERT [2]"), changes.stream().map(o -> ((JsonObject) o).getString("op") + " "
            + ((JsonObject) o).getValue("key")).toList());
        Await.that("readiness back up", Duration.ofSeconds(10), () -> "UP".equals(readiness(node, -1).get("changelog-store")));
        assertEquals(0, TestDatabases.count(infra, served, "SELECT count(*) FROM tidemark.changelog"));
      } finally {
        TestNodes.stop(node);
      }
    }
  }

  /** A changelog URL that names the served database under another host name moves nothing and empties nothing. */
  @Test
  void theServedDatabaseUnderAnotherNameIsNotAStore(SharedInfra infra) {
    String served = SERVED + "_alias";
    ChangelogFixtures.prepare(infra, served);
    TestDatabases.sql(infra, served, "DROP TABLE IF EXISTS public.sep_items", "CREATE TABLE public.sep_items (id int PRIMARY KEY, v text)");
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> config = ChangelogFixtures.config(infra, served, "sepalias", TestNodes.clusterName(), port,
        "127.0.0.1:" + port, "changelog");
    TidemarkNode node = TestNodes.startCaughtUp(config);
    try {
      TestDatabases.sql(infra, served, "INSERT INTO public.sep_items VALUES (1, 'kept')");
      ChangelogFixtures.awaitDecoded(infra, served);
    } finally {
      TestNodes.stop(node);
    }
    long rows = TestDatabases.count(infra, served, "SELECT count(*) FROM tidemark.changelog");
    config.put(ConfigKey.DATABASE_CHANGELOG_URL, "postgresql://localhost:" + infra.postgres().port() + "/" + served);
    node = TestNodes.start(config);
    try {
      assertTrue(rows >= 1, "the served database held changes");
      // the relay's tenures, each refused, over two seconds
      assertFalse(Await.until(() -> TestDatabases.count(infra, served, "SELECT count(*) FROM tidemark.changelog") != rows,
          Duration.ofSeconds(2)), "nothing was moved or emptied");
    } finally {
      TestNodes.stop(node);
    }
  }

  /** tidemark migrate creates the changelog's tables in its own database, doctor checks them, and uninstall removes them. */
  @Test
  void migrateDoctorAndUninstallReachTheChangelogsOwnDatabase(SharedInfra infra, @TempDir Path dir) throws Exception {
    String served = SERVED + "_cli_fresh";
    String store = STORE + "_cli";
    infra.postgres().createDatabaseIfMissing(served);
    infra.postgres().createDatabaseIfMissing(store);
    TestDatabases.sql(infra, store, "DROP SCHEMA IF EXISTS tidemark CASCADE");
    // what an operator's file holds: where the databases are and the login
    Map<ConfigKey, String> config = Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(served), ConfigKey.DATABASE_USER,
        infra.postgres().user(), ConfigKey.DATABASE_PASSWORD, infra.postgres().password(), ConfigKey.DATABASE_CHANGELOG_URL,
        infra.postgres().url(store));
    String where = "127.0.0.1:" + infra.postgres().port() + "/" + store;

    Cli.Run migrated = Cli.withConfig(dir, config, "migrate");
    assertEquals(0, migrated.code(), migrated.out() + migrated.err());
    assertTrue(migrated.out().contains("changelog stored in " + where + " (database.changelog-url)"), migrated.out());
    assertEquals(List.of("true"), TestDatabases.strings(infra, store, "SELECT (to_regclass('tidemark.changelog_state') IS NOT NULL)::text"));

    Cli.Run doctor = Cli.withConfig(dir, config, "doctor");
    assertTrue(doctor.out().contains("the changelog is stored in " + where), doctor.out() + doctor.err());

    Cli.Run removed = Cli.withConfig(dir, config, "uninstall", "--yes");
    assertEquals(0, removed.code(), removed.out() + removed.err());
    assertTrue(removed.out().contains("and its changelog from " + where), removed.out());
    assertEquals(List.of("false"), TestDatabases.strings(infra, store, "SELECT (to_regnamespace('tidemark') IS NOT NULL)::text"));
  }

  private static long confirmedLsn(SharedInfra infra, String db) {
    return TestDatabases.count(infra, db, "SELECT (confirmed_flush_lsn - '0/0')::bigint FROM pg_replication_slots"
        + " WHERE database = current_database() AND slot_name LIKE 'tidemark\\_%'");
  }

  /** The checks of /health/ready by id; {@code expectedStatus} -1 takes any. */
  private static Map<String, String> readiness(TidemarkNode node, int expectedStatus) {
    try (McpHttpClient c = new McpHttpClient("http://127.0.0.1:" + node.opsPort() + "/health/ready", null)) {
      McpHttpClient.Reply reply = c.send("GET", null, io.vertx.core.MultiMap.caseInsensitiveMultiMap());
      if (expectedStatus > 0) {
        assertEquals(expectedStatus, reply.status(), reply.body());
      }
      return reply.json().getJsonArray("checks").stream().map(JsonObject.class::cast)
          .collect(java.util.stream.Collectors.toMap(c2 -> c2.getString("id"), c2 -> c2.getString("status")));
    }
  }

  private static void awaitDecoded(SharedInfra infra, String served, String store) {
    TestDatabases.awaitDecoded(infra.postgres().jdbcUrl(served), infra.postgres().jdbcUrl(store), infra.postgres().user(),
        infra.postgres().password(), Duration.ofSeconds(60));
  }

  private static void awaitDecoded(SharedInfra infra) {
    awaitDecoded(infra, SERVED, STORE);
  }

  private static List<String> positions(JsonObject page) {
    List<String> out = new ArrayList<>();
    page.getJsonArray("changes").forEach(o -> out.add(((JsonObject) o).getString("position") + " " + ((JsonObject) o).getString("op")));
    return out;
  }
}
