package dev.tidemark.query;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.TestDatabases;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * {@code watch} against a real PostgreSQL and Kafka: a query role serves the watches, a second one
 * in a cluster of its own continues cursors of the first, and the relay runs on a harness of its
 * own (restarted with a short retention for the reset). Writes are made with plain JDBC, outside Tidemark.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WatchIT {

  static final String DB = "watch_it";
  static final String NAME = "wit";
  static final Duration WAIT = Duration.ofSeconds(60);
  /** watch.max-waiting-per-caller of the second query role. */
  static final int MAX_WAITING = 2;

  private SharedInfra infra;
  private ServiceHarness server;
  private ServiceHarness other;
  private ServiceHarness relay;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB,
        "DROP TABLE IF EXISTS public.w_items, public.w_rls, public.w_race, public.w_drop, public.w_revoke, public.w_other, public.w_keyed",
        "CREATE TABLE public.w_items (id int PRIMARY KEY, status text NOT NULL, qty int NOT NULL, secret text)",
        "CREATE TABLE public.w_rls (id int PRIMARY KEY, owner text NOT NULL, v int NOT NULL)",
        "CREATE TABLE public.w_race (id int PRIMARY KEY, v int NOT NULL)",
        "CREATE TABLE public.w_drop (id int PRIMARY KEY)",
        "CREATE TABLE public.w_revoke (id int PRIMARY KEY)",
        "CREATE TABLE public.w_other (id int PRIMARY KEY)",
        "CREATE TABLE public.w_keyed (id int PRIMARY KEY, status text NOT NULL)",
        "REVOKE ALL ON public.w_items FROM tidemark_reader",
        "GRANT SELECT (id, status, qty) ON public.w_items TO tidemark_reader",
        "GRANT SELECT ON public.w_rls, public.w_race, public.w_drop, public.w_revoke, public.w_other, public.w_keyed TO tidemark_reader",
        "ALTER TABLE public.w_rls ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY w_rls_own ON public.w_rls USING (owner = current_user)",
        "INSERT INTO public.w_items SELECT g, CASE WHEN g % 2 = 0 THEN 'open' ELSE 'closed' END, g, 'secret-' || g FROM generate_series(1, 20) g",
        "INSERT INTO public.w_race SELECT g, g FROM generate_series(1, 200) g",
        "INSERT INTO public.w_keyed SELECT g, CASE WHEN g % 2 = 0 THEN 'open' ELSE 'closed' END FROM generate_series(1, 6) g");
    Map<ConfigKey, String> db = ChangelogRole.served(infra, DB, NAME, Map.of());
    relay = ChangelogRole.start(infra, DB, NAME, Map.of(ConfigKey.DATABASE_KEY_ONLY_TABLES, "w_keyed"));
    // two query roles, each in a cluster of its own, as two nodes that share nothing but the database
    server = QueryRole.withFanOut(infra, db);
    Map<ConfigKey, String> limited = new HashMap<>(db);
    limited.put(ConfigKey.WATCH_MAX_WAITING_PER_CALLER, String.valueOf(MAX_WAITING));
    other = QueryRole.withFanOut(infra, limited);
    TestDatabases.awaitDecoded(infra, DB);
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(other, server, relay);
  }

  /** A watch call of the read-only caller on {@code role}. */
  private static JsonObject watch(ServiceHarness role, JsonObject args) {
    return role.ok(ServiceHarness.READER, "watch", args);
  }

  private static JsonObject open() {
    return new JsonObject().put("column", "status").put("op", "eq").put("value", "open");
  }

  /** The rows a watch holds, by key, as it applies each answer. */
  private static final class Held {
    final Map<String, JsonObject> rows = new HashMap<>();
    String cursor;

    void snapshot(JsonObject s) {
      rows.clear();
      for (Object o : s.getJsonArray("rows")) {
        JsonObject row = (JsonObject) o;
        rows.put(key(row, s.getJsonArray("key_columns")), row);
      }
      cursor = s.getString("cursor");
    }

    /** Applies one answer; its kind. */
    String apply(JsonObject s) {
      String kind = s.getString("kind");
      switch (kind) {
        case "snapshot", "reset" -> snapshot(s);
        case "patch" -> {
          for (Object o : s.getJsonArray("changes")) {
            JsonObject c = (JsonObject) o;
            String k = c.getJsonArray("key").encode();
            if ("upsert".equals(c.getString("op"))) {
              rows.put(k, c.getJsonObject("row"));
            } else {
              rows.remove(k);
            }
          }
          cursor = s.getString("cursor");
        }
        case "checkpoint" -> cursor = s.getString("cursor");
        default -> cursor = null;
      }
      return kind;
    }

    static String key(JsonObject row, JsonArray keyColumns) {
      JsonArray k = new JsonArray();
      keyColumns.forEach(c -> k.add(row.getValue((String) c)));
      return k.encode();
    }
  }

  /** Applies answers until the watch has caught up with everything committed before this call. */
  private static void catchUp(ServiceHarness c, JsonObject args, Held held, SharedInfra infra) {
    TestDatabases.awaitDecoded(infra, DB);
    Await.that("the watch to catch up", WAIT, () -> {
      JsonObject s = watch(c, args.copy().put("cursor", held.cursor));
      String kind = held.apply(s);
      return "checkpoint".equals(kind);
    });
  }

  private Map<String, JsonObject> select(String sql) throws Exception {
    Map<String, JsonObject> out = new HashMap<>();
    try (Connection c = TestDatabases.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      int n = r.getMetaData().getColumnCount();
      while (r.next()) {
        JsonObject row = new JsonObject();
        for (int i = 1; i <= n; i++) {
          row.put(r.getMetaData().getColumnName(i), r.getObject(i));
        }
        out.put(new JsonArray().add(r.getObject(1)).encode(), row);
      }
    }
    return out;
  }

  /** What the changelog holds of one key of w_race, for a failure's message. */
  private String history(String key) {
    StringBuilder out = new StringBuilder();
    try (Connection c = TestDatabases.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(
        "SELECT k.position, c.id, c.xid, c.op, c.before::text, c.after::text, k.committed_at FROM tidemark.changelog c"
            + " JOIN tidemark.changelog_commit k ON k.xid = c.xid WHERE c.table_name = 'w_race' AND c.key = '" + key + "'::jsonb"
            + " ORDER BY k.position, c.id")) {
      while (r.next()) {
        out.append("  ").append(r.getLong(1)).append('/').append(r.getLong(2)).append(" xid ").append(r.getString(3)).append(' ')
            .append(r.getString(4)).append(' ').append(r.getString(5)).append(" -> ").append(r.getString(6)).append('\n');
      }
    } catch (Exception e) {
      out.append(e);
    }
    return out.toString();
  }

  /** Set equality, saying which keys differ. */
  private static void assertSameRows(Map<String, JsonObject> expected, Map<String, JsonObject> held) {
    List<String> wrong = new ArrayList<>();
    java.util.Set<String> keys = new java.util.TreeSet<>(expected.keySet());
    keys.addAll(held.keySet());
    for (String k : keys) {
      if (!java.util.Objects.equals(expected.get(k), held.get(k))) {
        wrong.add(k + ": expected " + expected.get(k) + ", held " + held.get(k));
      }
    }
    assertTrue(wrong.isEmpty(), wrong.size() + " of " + keys.size() + " keys differ: " + wrong);
  }

  @Test
  @Order(1)
  void rowsEnterChangeAndLeaveTheFilterThroughPatches() throws Exception {
    JsonObject args = new JsonObject().put("table", "w_items").put("where", open());
    JsonObject first = watch(server, args);
    assertEquals("snapshot", first.getString("kind"));
    assertEquals(new JsonArray().add("id").add("status").add("qty"), first.getJsonArray("columns"), "only columns the role may read");
    assertEquals(10, first.getJsonArray("rows").size());
    assertFalse(first.encode().contains("secret"), first.encode());
    Held held = new Held();
    held.apply(first);

    sql(infra, DB, "INSERT INTO public.w_items VALUES (100, 'open', 1, 's')",  // enters
        "UPDATE public.w_items SET qty = 99 WHERE id = 2",                      // changes inside
        "UPDATE public.w_items SET status = 'closed' WHERE id = 4",             // leaves
        "DELETE FROM public.w_items WHERE id = 6",                              // deleted
        "UPDATE public.w_items SET status = 'open' WHERE id = 1",               // enters
        "UPDATE public.w_items SET qty = 5 WHERE id = 3",                       // outside, stays outside
        "INSERT INTO public.w_items VALUES (101, 'open', 1, 's')", "DELETE FROM public.w_items WHERE id = 101");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject patch = watch(server, args.copy().put("cursor", held.cursor).put("wait_ms", 5000));
    assertEquals("patch", patch.getString("kind"), patch.encode());
    assertFalse(patch.encode().contains("secret"), patch.encode());
    JsonArray changes = patch.getJsonArray("changes");
    assertTrue(changes.stream().noneMatch(o -> ((JsonObject) o).getJsonArray("key").getInteger(0) == 3),
        "a row changing outside the filter is not sent: " + changes.encode());
    assertTrue(changes.stream().anyMatch(o -> ((JsonObject) o).getString("op").equals("delete")
        && ((JsonObject) o).getJsonArray("key").getInteger(0) == 4), changes.encode());
    held.apply(patch);
    catchUp(server, args, held, infra);
    assertSameRows(select("SELECT id, status, qty FROM public.w_items WHERE status = 'open'"), held.rows);
    assertEquals(99, held.rows.get("[2]").getInteger("qty"));
  }

  @Test
  @Order(2)
  void nothingRelevantIsACheckpointAndACommitWakesAWaitingCall() throws Exception {
    JsonObject args = new JsonObject().put("table", "w_items").put("where", open());
    Held held = new Held();
    held.apply(watch(server, args));
    catchUp(server, args, held, infra);
    sql(infra, DB, "INSERT INTO public.w_other VALUES (1)", "UPDATE public.w_items SET qty = qty + 1 WHERE id = 3");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject quiet = watch(server, args.copy().put("cursor", held.cursor));
    assertEquals("checkpoint", quiet.getString("kind"), quiet.encode());
    held.apply(quiet);

    long waitMs = 20_000;
    long started = System.nanoTime();
    CompletableFuture<JsonObject> waiting;
    String cursor = held.cursor;
    waiting = CompletableFuture.supplyAsync(() -> watch(server, args.copy().put("cursor", cursor).put("wait_ms", (int) waitMs)));
    sql(infra, DB, "INSERT INTO public.w_items VALUES (200, 'open', 7, 's')");
    JsonObject woken = waiting.get(60, TimeUnit.SECONDS);
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    assertEquals("patch", woken.getString("kind"), woken.encode());
    assertEquals(200, woken.getJsonArray("changes").getJsonObject(0).getJsonArray("key").getInteger(0));
    assertTrue(tookMs < waitMs, "answered when the change committed, before wait_ms: " + tookMs + " ms");
  }

  @Test
  @Order(3)
  void writesRacingTheSnapshotAreNeitherMissedNorMixed() throws Exception {
    JsonObject args = new JsonObject().put("table", "w_race").put("where", new JsonObject().put("column", "v").put("op", "lt").put("value", 500));
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicInteger commits = new AtomicInteger();
    CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
      Random random = new Random(7);
      try (Connection c = TestDatabases.jdbc(infra, DB)) {
        c.setAutoCommit(false);
        var st = c.createStatement();
        while (writing.get() || commits.get() < 50) {
          int id = 1 + random.nextInt(300);
          switch (random.nextInt(4)) {
            case 0 -> st.execute("INSERT INTO public.w_race VALUES (" + id + ", " + random.nextInt(1000) + ") ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v");
            case 1 -> st.execute("UPDATE public.w_race SET v = " + random.nextInt(1000) + " WHERE id = " + id);
            case 2 -> st.execute("DELETE FROM public.w_race WHERE id = " + id);
            default -> {
              st.execute("UPDATE public.w_race SET v = v + 1 WHERE id BETWEEN " + id + " AND " + (id + 5));
              st.execute("INSERT INTO public.w_race VALUES (" + (id + 300) + ", 1) ON CONFLICT (id) DO UPDATE SET v = 2");
            }
          }
          c.commit();
          commits.incrementAndGet();
        }
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    Await.that("the writer to be running", WAIT, () -> commits.get() > 10);
    // several snapshots while the writer commits, each of which races it
    List<Held> watches = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Held held = new Held();
      held.apply(watch(server, args));
      watches.add(held);
      int atSnapshot = commits.get();
      Await.that("more commits after the snapshot", WAIT, () -> commits.get() > atSnapshot + 10);
    }
    writing.set(false);
    writer.get(60, TimeUnit.SECONDS);
    Map<String, JsonObject> now = select("SELECT id, v FROM public.w_race WHERE v < 500");
    for (Held held : watches) {
      Map<String, JsonObject> atSnapshot = new HashMap<>(held.rows);
      catchUp(server, args, held, infra);
      for (String k : now.keySet()) {
        if (!java.util.Objects.equals(now.get(k), held.rows.get(k))) {
          System.out.println("[watch-race] " + k + " in the snapshot: " + atSnapshot.get(k) + "\n" + history(k));
        }
      }
      for (String k : held.rows.keySet()) {
        if (!now.containsKey(k)) {
          System.out.println("[watch-race] " + k + " in the snapshot: " + atSnapshot.get(k) + "\n" + history(k));
        }
      }
      assertSameRows(now, held.rows);
    }
    System.out.printf("[watch-race] %d commits, %d snapshots, %d rows watched%n", commits.get(), watches.size(), now.size());
  }

  @Test
  @Order(4)
  void underRowLevelSecurityAnotherRolesRowsAndKeysNeverAppear() throws Exception {
    sql(infra, DB, "INSERT INTO public.w_rls VALUES (1, 'tidemark_reader', 1), (2, 'tidemark_reader', 2), (3, 'tidemark_writer', 3)");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject args = new JsonObject().put("table", "w_rls");
    JsonObject first = watch(server, args);
    assertEquals(2, first.getJsonArray("rows").size(), first.encode());
    Held held = new Held();
    held.apply(first);
    sql(infra, DB,
        "INSERT INTO public.w_rls VALUES (4, 'tidemark_writer', 4)",           // another role's row: never shown
        "UPDATE public.w_rls SET v = 33 WHERE id = 3",
        "DELETE FROM public.w_rls WHERE id = 3",                                // its key is never sent
        "UPDATE public.w_rls SET owner = 'tidemark_writer' WHERE id = 2",     // shown, then hidden: deleted
        "INSERT INTO public.w_rls VALUES (5, 'tidemark_reader', 5)");
    TestDatabases.awaitDecoded(infra, DB);
    StringBuilder seen = new StringBuilder();
    Await.that("the watch to catch up", WAIT, () -> {
      JsonObject s = watch(server, args.copy().put("cursor", held.cursor));
      seen.append(s.encode());
      return "checkpoint".equals(held.apply(s));
    });
    assertFalse(seen.toString().contains("tidemark_writer"), seen.toString());
    assertFalse(seen.toString().contains("[3]") || seen.toString().contains("[4]"), "no key of another role's row: " + seen);
    assertEquals(java.util.Set.of("[1]", "[5]"), held.rows.keySet());
  }

  @Test
  @Order(5)
  void columnsTheRoleMayNotReadAreRefusedAndBadArgumentsAreNamed() {
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("columns", new JsonArray().add("secret")), "PERMISSION_DENIED");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "no_such_table"), "NOT_FOUND");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("wait_ms", 40_000), "INVALID_ARGUMENTS");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("where",
        new JsonObject().put("column", "status").put("op", "eq").put("value", "open").put("extra", 1)), "INVALID_ARGUMENTS");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("limit", 5), "LIMIT_EXCEEDED");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("cursor", "AAAAforged"), "INVALID_CURSOR");
    String cursor = watch(server, new JsonObject().put("table", "w_items")).getString("cursor");
    server.error(ServiceHarness.READER, "watch", new JsonObject().put("table", "w_items").put("where", open()).put("cursor", cursor), "INVALID_CURSOR");
    // a cursor is the caller's own
    server.error(ServiceHarness.WRITER, "watch", new JsonObject().put("table", "w_items").put("cursor", cursor), "INVALID_CURSOR");
  }

  @Test
  @Order(6)
  void aCursorContinuesOnAnotherNode() {
    JsonObject args = new JsonObject().put("table", "w_items").put("where", open());
    Held held = new Held();
    held.apply(watch(server, args));
    sql(infra, DB, "UPDATE public.w_items SET qty = 1234 WHERE id = 8");
    Await.that("the change on the other node", WAIT, () -> {
      held.apply(watch(other, args.copy().put("cursor", held.cursor).put("wait_ms", 2000)));
      return held.rows.get("[8]").getInteger("qty") == 1234;
    });
  }

  @Test
  @Order(7)
  void aCallerPastItsWaitingWatchesIsRefusedNamingTheLimitAndAnotherCallersWatchIsStillServed() throws Exception {
    Caller second = new Caller("it-reader-2", "integration tests (second read-only)", DatabaseSetup.READER_ROLE, Access.READ_ONLY,
        List.of("*"));
    JsonObject args = new JsonObject().put("table", "w_other");
    Held mine = new Held();
    mine.apply(watch(other, args));
    catchUp(other, args, mine, infra);
    Held theirs = new Held();
    theirs.apply(other.ok(second, "watch", args));
    long waitMs = 30_000;
    // one call more than the limit, at once, on threads of their own: exactly one is refused
    ExecutorService threads = Executors.newFixedThreadPool(MAX_WAITING + 2);
    List<CompletableFuture<ToolReply>> calls = new ArrayList<>();
    for (int i = 0; i <= MAX_WAITING; i++) {
      calls.add(CompletableFuture.supplyAsync(
          () -> other.call(ServiceHarness.READER, "watch", args.copy().put("cursor", mine.cursor).put("wait_ms", (int) waitMs)), threads));
    }
    Await.that("the call past the limit refused", WAIT, () -> calls.stream().anyMatch(CompletableFuture::isDone));
    List<CompletableFuture<ToolReply>> waiting = calls.stream().filter(c -> !c.isDone()).toList();
    assertEquals(MAX_WAITING, waiting.size(), "calls still waiting");
    JsonObject refusal = calls.stream().filter(CompletableFuture::isDone).findFirst().orElseThrow().join().error();
    assertNotNull(refusal, "the call that answered at once was not refused");
    assertEquals("LIMIT_EXCEEDED", refusal.getString("code"), refusal::encode);
    assertEquals("watch.max-waiting-per-caller", refusal.getString("limit"));
    assertEquals(MAX_WAITING, refusal.getInteger("max_waiting"));
    long retry = refusal.getLong("retry_after_ms");
    assertTrue(retry > 0 && retry <= waitMs, "retry_after_ms " + retry);
    assertTrue(refusal.getString("message").contains("watch.max-waiting-per-caller"), refusal.getString("message"));

    // another caller of the same role still waits, and is woken by the next commit
    long started = System.nanoTime();
    CompletableFuture<JsonObject> other2 = CompletableFuture.supplyAsync(
        () -> other.ok(second, "watch", args.copy().put("cursor", theirs.cursor).put("wait_ms", (int) waitMs)), threads);
    sql(infra, DB, "INSERT INTO public.w_other VALUES (70)");
    JsonObject woken = other2.get(60, TimeUnit.SECONDS);
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    assertEquals("patch", woken.getString("kind"), woken.encode());
    assertTrue(tookMs < waitMs, "the other caller's watch answered before wait_ms: " + tookMs + " ms");
    for (CompletableFuture<ToolReply> w : waiting) {
      ToolReply reply = w.get(60, TimeUnit.SECONDS);
      assertEquals("patch", reply.structured().getString("kind"), () -> reply.toJson().encode());
    }
    threads.shutdown();
    // the first caller's watches answered: it may wait again
    assertNotNull(watch(other, args.copy().put("cursor", mine.cursor).put("wait_ms", 1)).getString("kind"));
  }

  @Test
  @Order(8)
  void aDroppedTableOrARevokedGrantEndsTheWatch() {
    JsonObject drop = new JsonObject().put("table", "w_drop");
    String dropCursor = watch(server, drop).getString("cursor");
    JsonObject revoke = new JsonObject().put("table", "w_revoke");
    String revokeCursor = watch(server, revoke).getString("cursor");
    sql(infra, DB, "DROP TABLE public.w_drop", "REVOKE SELECT ON public.w_revoke FROM tidemark_reader");
    JsonObject dropped = watch(server, drop.copy().put("cursor", dropCursor));
    assertEquals("terminal", dropped.getString("kind"), dropped.encode());
    assertEquals("table_dropped", dropped.getString("reason"));
    assertFalse(dropped.containsKey("cursor"));
    JsonObject revoked = watch(server, revoke.copy().put("cursor", revokeCursor).put("wait_ms", 1000));
    assertEquals("terminal", revoked.getString("kind"), revoked.encode());
    assertEquals("access_revoked", revoked.getString("reason"));
  }

  @Test
  @Order(9)
  void onATableWithTheKeyAloneARowThatLeftTheFilterOrWasDeletedIsDeletedFromTheWatch() throws Exception {
    assertEquals(List.of("d"), TestDatabases.strings(infra, DB, "SELECT relreplident::text FROM pg_class WHERE oid = 'public.w_keyed'::regclass"));
    ToolReply status = server.call(ServiceHarness.READER, "status", new JsonObject());
    JsonObject images = status.structured().getJsonObject("before_images");
    assertEquals("key", images.getString("public.w_keyed"), status.toJson().encode());
    assertFalse(images.containsKey("public.w_items"), "a table with full before-images is not listed: " + status.toJson().encode());
    assertTrue(status.summary().contains("before-images hold only the key on public.w_keyed"), status.summary());
    JsonObject args = new JsonObject().put("table", "w_keyed").put("where", open());
    Held held = new Held();
    held.apply(watch(server, args));
    catchUp(server, args, held, infra);
    assertEquals(java.util.Set.of("[2]", "[4]", "[6]"), held.rows.keySet());

    sql(infra, DB, "UPDATE public.w_keyed SET status = 'closed' WHERE id = 2",  // leaves: no old row to tell it was inside
        "DELETE FROM public.w_keyed WHERE id = 4",                              // deleted: its key alone
        "UPDATE public.w_keyed SET id = 60 WHERE id = 6",                       // a new key: the old one's columns
        "UPDATE public.w_keyed SET status = 'open' WHERE id = 1");              // enters
    catchUp(server, args, held, infra);
    assertSameRows(select("SELECT id, status FROM public.w_keyed WHERE status = 'open'"), held.rows);
    assertEquals(java.util.Set.of("[1]", "[60]"), held.rows.keySet());
  }

  @Test
  @Order(10)
  void aCursorOlderThanRetentionResetsWithAFreshSnapshot() {
    JsonObject args = new JsonObject().put("table", "w_items").put("where", open());
    Held held = new Held();
    held.apply(watch(server, args));
    catchUp(server, args, held, infra);
    String old = held.cursor;
    relay.close();
    relay = ChangelogRole.start(infra, DB, NAME,
        Map.of(ConfigKey.CHANGELOG_RETENTION_SECONDS, "1", ConfigKey.CHANGELOG_PRUNE_INTERVAL_SECONDS, "1",
            ConfigKey.DATABASE_KEY_ONLY_TABLES, "w_keyed"));
    sql(infra, DB, "UPDATE public.w_items SET qty = 77 WHERE id = 10");
    JsonObject[] last = new JsonObject[1];
    Await.that("the cursor to reset", WAIT, () -> {
      last[0] = watch(server, args.copy().put("cursor", old));
      return "reset".equals(last[0].getString("kind"));
    });
    assertEquals("expired", last[0].getString("reason"));
    assertNotNull(last[0].getString("cursor"));
    held.apply(last[0]);
    assertEquals(77, held.rows.get("[10]").getInteger("qty"));
  }
}
