package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * query is read-only by construction: every refusal, as the read-write caller (whose role may
 * write, so only the guard stands in the way), and nothing a call does reaches the next call on
 * the same connection: the role has a pool of one connection.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReadOnlyGuardIT {

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra);
    try (Connection conn = jdbc()) {
      conn.createStatement().execute("CREATE OR REPLACE PROCEDURE public.it_touch() LANGUAGE sql AS $$ UPDATE public.products SET active = active $$");
      conn.createStatement().execute("GRANT EXECUTE ON PROCEDURE public.it_touch() TO tidemark_writer");
      // functions someone with CREATE rights marked STABLE although they change session state, which the
      // operator lists as reviewed: the function check lets them through, so only the session reset stands
      // between a call and the next
      conn.createStatement().execute("CREATE OR REPLACE FUNCTION public.it_lock(bigint) RETURNS text LANGUAGE sql STABLE"
          + " AS $$ SELECT pg_advisory_lock($1)::text $$");
      conn.createStatement().execute("CREATE OR REPLACE FUNCTION public.it_set(text, text) RETURNS text LANGUAGE sql STABLE"
          + " AS $$ SELECT set_config($1, $2, false) $$");
    }
    harness = QueryRole.start(infra, Map.of(
        ConfigKey.DATABASE_POOL_SIZE, "1",
        ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "1000",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.it_lock,public.it_set"));
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private long count(String sql) {
    try (Connection conn = jdbc(); ResultSet rs = conn.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private Connection jdbc() throws Exception {
    return ServiceHarness.jdbc(infra);
  }

  /** A fingerprint of everything the refused statements could touch. */
  private String databaseState() throws Exception {
    try (Connection conn = jdbc(); ResultSet rs = conn.createStatement().executeQuery("""
        SELECT (SELECT count(*) || '/' || sum(total) || '/' || max(status::text) FROM public.orders)
            || '|' || (SELECT count(*) FROM public.customers)
            || '|' || (SELECT last_value || '/' || is_called FROM public.orders_id_seq)
            || '|' || (SELECT count(*) FROM pg_class WHERE relname LIKE 'it_evil%')
            || '|' || (SELECT xmin::text FROM public.products WHERE id = 1)""")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private void refused(String sql) {
    try {
      String before = databaseState();
      ToolReply result = query(new JsonObject().put("sql", sql));
      assertNotNull(result.error(), () -> "not refused: " + sql + " -> " + result.toJson().encode());
      String code = result.error().getString("code");
      assertTrue(code.equals("READ_ONLY") || code.equals("PERMISSION_DENIED"), sql + " -> " + result.toJson().encode());
      assertEquals(before, databaseState(), "nothing changed: " + sql);
      assertEquals(1, rows("SELECT 1 AS ok").getInteger("ok"), "the role keeps serving after " + sql);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private ToolReply query(JsonObject arguments) {
    return harness.call(ServiceHarness.WRITER, "query", arguments);
  }

  /** The error of a call that must fail, whatever its code. */
  private JsonObject error(String tool, JsonObject arguments) {
    ToolReply result = harness.call(ServiceHarness.WRITER, tool, arguments);
    assertNotNull(result.error(), () -> tool + " should fail: " + result.toJson().encode());
    return result.error();
  }

  private JsonObject rows(String sql) {
    return harness.ok(ServiceHarness.WRITER, "query", new JsonObject().put("sql", sql)).getJsonArray("rows").getJsonObject(0);
  }

  // ---- what a refusal tells the caller to do ----

  @Test
  void aWriteRefusedPointsAReadWriteCallerToTheChangeToolsAndTellsAReadOnlyOneItMayOnlyRead() {
    JsonObject writer = harness.error(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "UPDATE orders SET total = total"), "READ_ONLY");
    assertTrue(writer.getString("message").contains("Use a change tool (insert_rows, update_rows, delete_rows or execute)"),
        writer.getString("message"));
    JsonObject reader = harness.error(ServiceHarness.READER, "query", new JsonObject().put("sql", "UPDATE orders SET total = total"), "READ_ONLY");
    assertTrue(reader.getString("message").contains("This token may only read") && !reader.getString("message").contains("change tool"),
        reader.getString("message"));
    JsonObject locking = harness.error(ServiceHarness.READER, "explain", new JsonObject().put("sql", "SELECT * FROM orders FOR UPDATE"),
        "READ_ONLY");
    assertTrue(!locking.getString("message").contains("change tool"), locking.getString("message"));
  }

  @Test
  void aSyntaxErrorNamesTheSqlArgumentAndAStatementPastItsTimeSaysItWasCancelled() {
    JsonObject syntax = harness.error(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELEC 1"), "INVALID_ARGUMENTS");
    assertEquals("sql", syntax.getString("argument"));
    assertEquals("42601", syntax.getString("sqlstate"));
    JsonObject slow = harness.error(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELECT pg_sleep(5) AS slept"), "TIMEOUT");
    assertTrue(slow.getString("message").startsWith("PostgreSQL cancelled the statement (SQLSTATE 57014)"), slow.getString("message"));
    assertEquals("statement", slow.getString("waited_for"));
  }

  // ---- every refusal, each on its own ----

  @Test void insertIsRefused() { refused("INSERT INTO customers(name, email) VALUES ('x', 'it-evil@example.com')"); }
  @Test void updateIsRefused() { refused("UPDATE orders SET total = 0"); }
  @Test void deleteIsRefused() { refused("DELETE FROM order_items"); }
  @Test void mergeIsRefused() { refused("MERGE INTO orders o USING (SELECT 1 AS id) s ON o.id = s.id WHEN MATCHED THEN UPDATE SET total = 0"); }
  @Test void aDataModifyingCteIsRefused() { refused("WITH gone AS (DELETE FROM order_items RETURNING *) SELECT count(*) FROM gone"); }
  @Test void ddlIsRefused() { refused("CREATE TABLE it_evil (id int)"); }
  @Test void dropIsRefused() { refused("DROP TABLE order_items"); }
  @Test void selectIntoIsRefused() { refused("SELECT * INTO it_evil_copy FROM orders"); }
  @Test void nextvalIsRefused() { refused("SELECT nextval('orders_id_seq')"); }
  @Test void selectForUpdateIsRefused() { refused("SELECT * FROM orders WHERE id = 1 FOR UPDATE"); }
  @Test void selectForShareIsRefused() { refused("SELECT * FROM orders WHERE id = 1 FOR SHARE"); }
  @Test void copyToProgramIsRefused() { refused("COPY orders TO PROGRAM 'touch /tmp/it_evil'"); }
  @Test void copyToFileIsRefused() { refused("COPY orders TO '/tmp/it_evil.csv'"); }
  @Test void aDoBlockIsRefused() { refused("DO $$ BEGIN UPDATE orders SET total = 0; END $$"); }
  @Test void callIsRefused() { refused("CALL public.it_touch()"); }
  @Test void lockIsRefused() { refused("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE"); }
  @Test void notifyIsRefused() { refused("NOTIFY it_channel, 'hello'"); }
  @Test void listenIsRefused() { refused("LISTEN it_channel"); }
  @Test void setRoleIsRefused() { refused("SET ROLE postgres"); }
  @Test void setIsRefused() { refused("SET work_mem = '1MB'"); }
  @Test void prepareIsRefused() { refused("PREPARE it_evil AS SELECT 1"); }
  @Test void severalStatementsAreRefused() { refused("SELECT 1; DELETE FROM order_items"); }
  @Test void beginAndCommitInsideTheTextAreRefused() {
    refused("BEGIN");
    refused("COMMIT");
    refused("BEGIN; UPDATE orders SET total = 0; COMMIT");
  }
  @Test void aWriteInsideAFunctionIsRefusedByTheReadOnlyTransaction() {
    refused("SELECT setval('orders_id_seq', 1)");
  }

  @Test
  void explainAnalyzeRunsOnlyWhatTheGuardAccepts() throws Exception {
    String before = databaseState();
    for (String sql : new String[] {"DELETE FROM order_items", "SELECT nextval('orders_id_seq')", "NOTIFY it_channel"}) {
      JsonObject e = error("explain", new JsonObject().put("sql", sql).put("analyze", true));
      assertEquals("READ_ONLY", e.getString("code"), sql + " -> " + e.encode());
    }
    assertEquals(before, databaseState());
  }

  @Test
  void severalStatementsAreRefusedWithAMessageSayingSo() {
    JsonObject e = error("query", new JsonObject().put("sql", "SELECT 1; SELECT 2"));
    assertEquals("READ_ONLY", e.getString("code"));
    assertTrue(e.getString("message").contains("exactly one statement"), e.getString("message"));
  }

  // ---- nothing outlives a call on the pooled connection ----

  @Test
  void aVolatileFunctionThatChangesStateIsRefusedBeforeItRuns() {
    for (String sql : List.of("SELECT pg_advisory_lock(4242)", "SELECT pg_advisory_xact_lock(1), pg_sleep(1)",
        "SELECT set_config('work_mem', '1234kB', false)", "SELECT pg_notify('it', 'x')", "SELECT * FROM pg_ls_dir('.')",
        "SELECT query_to_xml('select 1', false, false, '')", "SELECT x FROM (SELECT pg_try_advisory_lock(7) AS x) s")) {
      JsonObject e = error("query", new JsonObject().put("sql", sql));
      if ("PERMISSION_DENIED".equals(e.getString("code"))) {
        continue;  // PostgreSQL refused it while planning: the role may not execute the function at all
      }
      assertEquals("READ_ONLY", e.getString("code"), sql);
      assertTrue(e.getJsonArray("functions").size() > 0, e::encode);
    }
    assertEquals(0, count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"), "nothing was locked");
  }

  @Test
  void anAdvisoryLockEndsWithItsCall() {
    int pid = rows("SELECT pg_backend_pid() AS pid, public.it_lock(4242) AS locked").getInteger("pid");
    JsonObject next = rows("SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS held");
    assertEquals(pid, next.getInteger("pid"), "the next call ran on the same connection");
    assertEquals(0, next.getInteger("held"));
  }

  @Test
  void aSettingEndsWithItsCall() {
    int pid = rows("SELECT pg_backend_pid() AS pid, public.it_set('work_mem', '1234kB') AS wm").getInteger("pid");
    JsonObject next = rows("SELECT pg_backend_pid() AS pid, current_setting('work_mem') AS wm, current_user AS who");
    assertEquals(pid, next.getInteger("pid"));
    assertNotEquals("1234kB", next.getString("wm"));
    assertEquals("tidemark_writer", next.getString("who"));
  }

  @Test
  void preparedStatementsEndWithTheirCall() {
    int pid = rows("SELECT pg_backend_pid() AS pid, 1 AS marker_4242").getInteger("pid");
    refused("PREPARE it_evil AS SELECT 1");
    JsonObject next = rows("SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_prepared_statements "
        + "WHERE from_sql OR strpos(statement, 'marker_' || '4242') > 0) AS left_over");
    assertEquals(pid, next.getInteger("pid"));
    assertEquals(0, next.getInteger("left_over"));
  }

  @Test
  void temporaryTablesNeverOutliveTheirCall() {
    int pid = rows("SELECT pg_backend_pid() AS pid").getInteger("pid");
    refused("CREATE TEMP TABLE it_evil_temp (id int)");
    refused("SELECT 1 AS id INTO TEMP it_evil_temp");
    JsonObject next = rows("SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_class WHERE relpersistence = 't') AS temp_tables");
    assertEquals(pid, next.getInteger("pid"));
    assertEquals(0, next.getInteger("temp_tables"));
  }

  @Test
  void listenNeverOutlivesItsCall() {
    int pid = rows("SELECT pg_backend_pid() AS pid").getInteger("pid");
    refused("LISTEN it_channel");
    JsonObject next = rows("SELECT pg_backend_pid() AS pid, (SELECT count(*) FROM pg_listening_channels()) AS channels, "
        + "(SELECT count(*) FROM pg_cursors WHERE is_holdable) AS held_cursors");
    assertEquals(pid, next.getInteger("pid"));
    assertEquals(0, next.getInteger("channels"));
    assertEquals(0, next.getInteger("held_cursors"));
  }

  @Test
  void aStatementPastTheTimeoutEndsWithTimeoutAndItsBackendIsFreeAtOnce() throws Exception {
    long started = System.nanoTime();
    harness.error(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELECT pg_sleep(30) AS slept"), "TIMEOUT");
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    assertTrue(tookMs < 10_000, "took " + tookMs + " ms");
    try (Connection conn = jdbc(); ResultSet rs = conn.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND state <> 'idle' AND pid <> pg_backend_pid()")) {
      rs.next();
      assertEquals(0, rs.getInt(1), "no backend still runs the statement");
    }
    assertEquals(1, rows("SELECT 1 AS ok").getInteger("ok"), "the connection serves the next call");
  }

  @Test
  void aNonQueryParamCountIsCheckedBeforeAnythingRuns() {
    JsonObject e = harness.error(ServiceHarness.WRITER, "query",
        new JsonObject().put("sql", "SELECT $1::int AS a").put("params", new JsonArray().add(1).add(2)), "INVALID_ARGUMENTS");
    assertEquals("params", e.getString("argument"));
  }
}
