package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A caller is only ever itself: every way out of the caller's role that a hostile agent found,
 * each refused by PostgreSQL with the code the contract assigns, and each shown to have read,
 * written or left behind nothing. The node has one connection per pool, so that anything a call
 * left on its connection would reach the next call.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallerIsolationIT {

  static final String DB = "caller_isolation_it";
  /** The changelog's old advisory position lock, which any role could take. */
  static final long OLD_POSITION_LOCK = 8388262611043690597L;

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient writer;
  private McpHttpClient reader;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.sec_people, public.sec_items CASCADE",
        "CREATE TABLE public.sec_people (id int PRIMARY KEY, name text NOT NULL, secret text)",
        "CREATE TABLE public.sec_items (id int PRIMARY KEY, qty int NOT NULL DEFAULT 0)",
        "INSERT INTO public.sec_items VALUES (1, 0), (2, 0)",
        "REVOKE ALL ON public.sec_people FROM tidemark_reader, tidemark_writer",
        "GRANT SELECT (id, name) ON public.sec_people TO tidemark_reader",
        "GRANT SELECT (id, name), INSERT, UPDATE ON public.sec_people TO tidemark_writer",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.sec_items TO tidemark_writer",
        "GRANT SELECT ON public.sec_items TO tidemark_reader",
        "SELECT tidemark.capture_schemas(ARRAY['public'])",
        // functions someone with CREATE rights marked STABLE although they change session state, and that the
        // operator lists as reviewed (database.reviewed-functions): the function check takes them as they are
        "CREATE OR REPLACE FUNCTION public.it_claim(text) RETURNS boolean LANGUAGE sql STABLE"
            + " AS $$ SELECT set_config('tidemark.caller', $1, true) IS NOT NULL $$",
        "CREATE OR REPLACE FUNCTION public.it_as(text) RETURNS boolean LANGUAGE sql STABLE"
            + " AS $$ SELECT set_config('tidemark.identity', $1, true) IS NOT NULL $$",
        "CREATE OR REPLACE FUNCTION public.it_sneak(text) RETURNS boolean LANGUAGE sql STABLE"
            + " AS $$ SELECT set_config('search_path', $1, false) IS NOT NULL $$",
        "CREATE OR REPLACE FUNCTION public.it_lock(bigint) RETURNS boolean LANGUAGE sql STABLE"
            + " AS $$ SELECT pg_advisory_lock($1) IS NULL $$");
    // the changelog role too: who made a change reaches change_attribution through the relay
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DB),
        ConfigKey.DATABASE_POOL_SIZE, "1",
        ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "8000",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.it_claim,public.it_as,public.it_sneak,public.it_lock"));
    writer = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
    writer.initialize();
    reader = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN);
    reader.initialize();
  }

  @AfterAll
  void stop() {
    for (McpHttpClient c : new McpHttpClient[] {writer, reader}) {
      if (c != null) {
        c.close();
      }
    }
    TestNodes.stop(node);
  }

  // ---- helpers ----

  private long count(String query) {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(query)) {
      r.next();
      return r.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Calls a tool that must fail with {@code code}; returns the whole result, to check what it shows. */
  private static JsonObject refused(McpHttpClient client, String tool, JsonObject args, String code) {
    JsonObject result = client.callTool(tool, args);
    assertEquals(true, result.getBoolean("isError"), () -> tool + " " + args.encode() + " was not refused: " + result.encode());
    assertEquals(code, result.getJsonObject("structuredContent").getJsonObject("error").getString("code"), result::encode);
    return result;
  }

  /**
   * Runs {@code sql} on a connection that logged in as {@code role} itself, as Tidemark's caller
   * pools do, bypassing every check of Tidemark's own: the SQLSTATE PostgreSQL answers, or null
   * when it ran. This shows that PostgreSQL alone keeps the caller inside its role.
   */
  private String asRoleItself(String role, String sql) {
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), role, TestNodes.CALLER_PASSWORDS.get(role));
        java.sql.Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        st.execute(sql);
        return null;
      } catch (java.sql.SQLException e) {
        return e.getSQLState();
      } finally {
        c.rollback();
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static JsonObject query(String sql) {
    return new JsonObject().put("sql", sql);
  }

  private static JsonArray rows(JsonObject structured) {
    return structured.getJsonArray("rows");
  }

  // ---- 1. the role switch-back ----

  @Test
  void switchingBackFromInsideAStatementLandsOnTheCallersOwnRole() throws Exception {
    for (String role : List.of("tidemark_reader", "tidemark_writer")) {
      // PostgreSQL itself: on the caller's own login, switching back lands on the caller's role
      try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), role, TestNodes.CALLER_PASSWORDS.get(role));
          ResultSet r = c.createStatement().executeQuery(
              "SELECT set_config('role', 'none', true), current_user::text, session_user::text")) {
        r.next();
        assertEquals(role, r.getString(2));
        assertEquals(role, r.getString(3), "the session user is the caller's role, never Tidemark's login");
      }
      assertEquals("42501", asRoleItself(role, "SELECT set_config('role', '" + infra.postgres().user() + "', true)"));
    }
    // and Tidemark refuses the setting before anything runs
    for (McpHttpClient c : List.of(reader, writer)) {
      JsonObject result = refused(c, "query", query("SELECT set_config('role', 'none', true) AS r, current_user::text AS now_user"),
          "READ_ONLY");
      assertTrue(result.encode().contains("set_config"), result::encode);
    }
    JsonObject row = rows(ToolResults.ok(reader, "query", query("SELECT current_user::text AS now_user, session_user::text AS login")))
        .getJsonObject(0);
    assertEquals("tidemark_reader", row.getString("login"));
  }

  @Test
  void noCallerStatementReadsTheServersSecretsTokensPasswordsOrFiles() {
    List<String> attempts = List.of(
        "SELECT query_to_xml('select rolname, rolpassword from pg_authid', false, false, '')",
        "SELECT set_config('role', 'none', true), query_to_xml('select token_hash from tidemark.api_token', false, false, '')",
        "SELECT query_to_xml('select secret from tidemark.key_ring', false, false, '')",
        "SELECT query_to_xml('select secret from tidemark.changelog_state', false, false, '')",
        "SELECT query_to_xml('select outcome from tidemark.idempotency', false, false, '')",
        "SELECT ts_stat('select to_tsvector(token_hash) from tidemark.api_token')",
        "SELECT pg_read_file('postgresql.conf')",
        "SELECT pg_ls_dir('.')",
        "SELECT rolname, rolpassword FROM pg_authid",
        "SELECT token_hash FROM tidemark.api_token");
    for (McpHttpClient c : List.of(reader, writer)) {
      for (String sql : attempts) {
        JsonObject result = c.callTool("query", query(sql));
        assertEquals(true, result.getBoolean("isError"), () -> sql + " was not refused: " + result.encode());
        String shown = result.encode();
        assertFalse(shown.contains("tmk_") || shown.contains("SCRAM") || shown.contains("md5") || shown.contains("postgres"),
            "nothing of the server's or another role's leaks: " + shown);
      }
    }
    // PostgreSQL refuses each of them on the caller's own login, whatever Tidemark checks first
    for (String role : List.of("tidemark_reader", "tidemark_writer")) {
      for (String sql : attempts) {
        assertEquals("42501", asRoleItself(role, sql), () -> role + ": " + sql);
      }
    }
  }

  @Test
  void aCallerCannotSignalTheServersBackendsReloadTheConfigOrCreateASlot() {
    String login = infra.postgres().user();
    List<String> attempts = List.of(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + login + "' AND pid <> pg_backend_pid()",
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = '" + login + "' AND pid <> pg_backend_pid()",
        "SELECT pg_reload_conf()",
        "SELECT pg_create_logical_replication_slot('it_evil_slot', 'pgoutput')",
        "SELECT pg_backup_start('it_evil')");
    for (String sql : attempts) {
      // the function check refuses each before it runs, or PostgreSQL does while planning it (no EXECUTE right)
      JsonObject result = writer.callTool("query", query(sql));
      assertEquals(true, result.getBoolean("isError"), () -> sql + " was not refused: " + result.encode());
      assertTrue(List.of("READ_ONLY", "PERMISSION_DENIED").contains(
          result.getJsonObject("structuredContent").getJsonObject("error").getString("code")), result::encode);
      assertEquals("42501", asRoleItself("tidemark_writer", sql), sql);
    }
    assertEquals(0, count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'it_evil_slot'"));
    assertTrue(count("SELECT count(*) FROM pg_stat_activity WHERE usename = '" + login + "'") > 0,
        "Tidemark's own connections are still there");
  }

  // ---- 2. files written from a plan ----

  @Test
  void aPlanCannotWriteAFileOnTheHost() throws Exception {
    Path target = Files.createTempDirectory("tidemark-it").resolve("evil.txt");
    String sql = "UPDATE public.sec_items SET qty = qty WHERE id = 1 AND query_to_xml("
        + "'select lo_export(lo_from_bytea(0, ''evil''::bytea), ''" + target + "'')', false, false, '') IS NOT NULL";
    refused(writer, "execute", new JsonObject().put("sql", sql), "INVALID_ARGUMENTS");
    refused(writer, "transaction", new JsonObject().put("statements", new JsonArray()
        .add(new JsonObject().put("sql", "UPDATE public.sec_items SET qty = qty WHERE id = 1"))
        .add(new JsonObject().put("sql", sql))), "INVALID_ARGUMENTS");
    JsonObject direct = writer.callTool("execute", new JsonObject().put("sql", "UPDATE public.sec_items SET qty = qty WHERE id = 1 AND "
        + "lo_export(lo_from_bytea(0, 'evil'::bytea), '" + target + "') = 1"));
    assertTrue(List.of("INVALID_ARGUMENTS", "PERMISSION_DENIED").contains(
        direct.getJsonObject("structuredContent").getJsonObject("error").getString("code")), direct::encode);
    assertEquals("42501", asRoleItself("tidemark_writer", "SELECT lo_export(lo_from_bytea(0, 'evil'::bytea), '" + target + "')"),
        "PostgreSQL refuses it on the caller's own login too");
    assertFalse(Files.exists(target), "no file was written");
    assertEquals(0, count("SELECT count(*) FROM pg_largeobject_metadata"), "no large object was left");
  }

  // ---- 3. Tidemark's own functions ----

  @Test
  void tidemarksOwnFunctionsAreNotCallableAndTheCaptureStays() {
    long triggers = count("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tidemark_capture%'");
    assertTrue(triggers > 0);
    List<String> calls = List.of("tidemark.capture_schemas(ARRAY[]::text[]) >= 0", "tidemark.reconcile_capture() >= 0",
        "tidemark.add_key(0, 0) > 0", "tidemark.mac_ok('a', 'b')",
        "EXISTS (SELECT 1 FROM tidemark.changes_of_current_transaction(repeat('0', 64)))",
        "tidemark.record_commit('someone', 'someone', 'k', 'h', NULL, NULL, 'execute', '{}', 24, repeat('0', 64)) IS NOT NULL");
    for (String call : calls) {
      String sql = "DELETE FROM public.sec_items WHERE id = 2 AND " + call;
      JsonObject result = writer.callTool("execute", new JsonObject().put("sql", sql));
      assertEquals(true, result.getBoolean("isError"), () -> call + " was not refused: " + result.encode());
      String code = result.getJsonObject("structuredContent").getJsonObject("error").getString("code");
      assertTrue(List.of("INVALID_ARGUMENTS", "PERMISSION_DENIED").contains(code), result::encode);
      assertEquals("42501", asRoleItself("tidemark_writer", sql), () -> "PostgreSQL refuses " + call + " on the caller's own login");
    }
    assertEquals(triggers, count("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tidemark_capture%'"));
    assertEquals(2, count("SELECT count(*) FROM public.sec_items"));
    assertEquals(1, count("SELECT count(*) FROM tidemark.key_ring"), "no key was added");
  }

  @Test
  void tidemarksOwnTablesAreNotServedByName() {
    for (McpHttpClient c : List.of(reader, writer)) {
      refused(c, "query", query("SELECT * FROM tidemark.api_token"), "PERMISSION_DENIED");
      refused(c, "get_row", new JsonObject().put("table", "tidemark.key_ring").put("key", 1), "NOT_FOUND");
    }
  }

  // ---- 4. a read cannot stall commits ----

  @Test
  void aReadCannotTakeALockThatOthersWaitForNorStallCommits() throws Exception {
    refused(reader, "query", query("SELECT pg_advisory_xact_lock(" + OLD_POSITION_LOCK + "), pg_sleep(3)"), "READ_ONLY");
    refused(reader, "query", query("SELECT pg_try_advisory_lock(42)"), "READ_ONLY");
    assertEquals(0, count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"), "no advisory lock was taken");
    // even on the caller's own login, the old advisory position lock no longer holds commits back
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), "tidemark_reader",
        TestNodes.CALLER_PASSWORDS.get("tidemark_reader"))) {
      c.setAutoCommit(false);
      c.createStatement().execute("SELECT pg_advisory_xact_lock(" + OLD_POSITION_LOCK + ")");
      CompletableFuture<Void> writes = CompletableFuture.runAsync(() ->
          sql(infra, DB, "INSERT INTO public.sec_items VALUES (100, 1)", "DELETE FROM public.sec_items WHERE id = 100"));
      writes.get(20, java.util.concurrent.TimeUnit.SECONDS);
      c.rollback();
    }
    assertEquals(0, count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        + " WHERE n.nspname = 'tidemark' AND c.relname = 'position_lock'"), "capture reads the WAL: commits take no lock of Tidemark's");
  }

  // ---- 5. attribution and identity ----

  @Test
  void aSettingInACallersStatementCannotChangeWhoTheChangelogSaysMadeTheChange() {
    refused(writer, "execute", new JsonObject().put("sql",
        "UPDATE public.sec_items SET qty = qty + 1 WHERE id = 1 AND set_config('tidemark.caller', 'someone-else', true) IS NOT NULL"),
        "INVALID_ARGUMENTS");
    // a function the operator reviewed passes the function check: the attribution still holds
    JsonObject args = new JsonObject().put("sql", "UPDATE public.sec_items SET qty = qty + 1 WHERE id = 1 AND public.it_claim('someone-else')");
    JsonObject plan = ToolResults.ok(writer, "execute", args);
    String key = "iso-" + UUID.randomUUID();
    ToolResults.ok(writer, "execute", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
    ChangelogFixtures.awaitDecoded(infra, DB);
    assertEquals(1, count("SELECT count(*) FROM tidemark.change_attribution WHERE idempotency_key = '" + key
        + "' AND caller = 'dev-read-write' AND tool = 'execute'"));
    assertEquals(0, count("SELECT count(*) FROM tidemark.change_attribution WHERE caller = 'someone-else'"));
  }

  @Test
  void aForgedIdentityIsRefusedAndShowsNoOneElsesRows() {
    for (String forged : List.of("dev-read-write", "v1|1|99999999999999|00|dev-read-write")) {
      refused(reader, "query", query("SELECT set_config('tidemark.identity', '" + forged + "', true)"), "READ_ONLY");
      // through a function that sets it (reviewed, so the function check lets it pass), the signature refuses it
      JsonObject result = refused(reader, "query", query("SELECT public.it_as('" + forged + "') AS forged, tidemark.caller() AS who"),
          "PERMISSION_DENIED");
      assertFalse(result.encode().contains("Plan every change"), "the writer's note is not shown: " + result.encode());
      assertEquals("42501", asRoleItself("tidemark_reader",
          "SELECT set_config('tidemark.identity', '" + forged + "', true), tidemark.caller()"));
    }
  }

  @Test
  void twoCallersSeeAndWriteOnlyTheirOwnRowsUnderRowLevelSecurity() {
    JsonArray writerRows = rows(ToolResults.ok(writer, "list_rows", new JsonObject().put("table", "agent_notes")));
    JsonArray readerRows = rows(ToolResults.ok(reader, "list_rows", new JsonObject().put("table", "agent_notes")));
    assertTrue(writerRows.size() >= 2, writerRows::encode);
    writerRows.forEach(r -> assertEquals("dev-read-write", ((JsonObject) r).getString("owner")));
    long readersOwn = count("SELECT count(*) FROM public.agent_notes WHERE owner = 'dev-read-only'");
    assertEquals(readersOwn, readerRows.size(), readerRows::encode);
    readerRows.forEach(r -> assertEquals("dev-read-only", ((JsonObject) r).getString("owner")));
    long readersNote = readerRows.getJsonObject(0).getLong("id");
    refused(writer, "get_row", new JsonObject().put("table", "agent_notes").put("key", readersNote), "NOT_FOUND");
    ToolResults.ok(reader, "get_row", new JsonObject().put("table", "agent_notes").put("key", readersNote));
    // the row as a resource, and a subscription to it: the same policy decides
    String uri = "tidemark://row/public.agent_notes/" + readersNote;
    JsonObject mine = reader.rpc("resources/read", new JsonObject().put("uri", uri));
    assertNotNull(mine.getJsonObject("result"), mine::encode);
    assertTrue(mine.encode().contains("dev-read-only"), mine::encode);
    JsonObject theirs = writer.rpc("resources/read", new JsonObject().put("uri", uri));
    assertNotNull(theirs.getJsonObject("error"), "another caller's row is not a resource the writer can read: " + theirs.encode());
    assertFalse(theirs.encode().contains("dev-read-only"), theirs::encode);
    JsonObject subscribed = writer.rpc("resources/subscribe", new JsonObject().put("uri", uri));
    assertNotNull(subscribed.getJsonObject("error"), "nor one it may subscribe to: " + subscribed.encode());
    assertNotNull(reader.rpc("resources/subscribe", new JsonObject().put("uri", uri)).getJsonObject("result"));
    JsonObject wholeTable = reader.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/public.agent_notes"));
    assertEquals(-32602, wholeTable.getJsonObject("error").getInteger("code"), "a table with row-level security is not subscribable whole");
    assertTrue(wholeTable.getJsonObject("error").getString("message").contains("row-level security"), wholeTable::encode);
    JsonArray counted = rows(ToolResults.ok(reader, "query", query("SELECT count(*) AS n FROM public.agent_notes")));
    assertEquals(readersOwn, counted.getJsonObject(0).getLong("n"));
    // a new row takes the verified caller as its owner; another owner is refused by the policy
    JsonObject insert = new JsonObject().put("table", "agent_notes").put("rows", new JsonArray().add(new JsonObject().put("body", "mine")));
    JsonObject plan = ToolResults.ok(writer, "insert_rows", insert);
    JsonObject done = ToolResults.ok(writer, "insert_rows", insert.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", "iso-" + UUID.randomUUID()));
    assertEquals(1, done.getJsonObject("totals").getInteger("inserted"));
    assertEquals(1, count("SELECT count(*) FROM public.agent_notes WHERE body = 'mine' AND owner = 'dev-read-write'"));
    refused(writer, "insert_rows", new JsonObject().put("table", "agent_notes").put("rows", new JsonArray()
        .add(new JsonObject().put("body", "theirs").put("owner", "dev-read-only"))), "PERMISSION_DENIED");
    assertEquals(0, count("SELECT count(*) FROM public.agent_notes WHERE body = 'theirs'"));
  }

  @Test
  void changesSinceShowsEachCallerOnlyTheRowsItsPoliciesLetItRead() {
    String readerHead = ToolResults.ok(reader, "status", new JsonObject()).getString("changelog_head");
    String writerHead = ToolResults.ok(writer, "status", new JsonObject()).getString("changelog_head");
    sql(infra, DB, "INSERT INTO public.agent_notes (owner, body) VALUES ('dev-read-only', 'for the reader'), ('dev-read-write', 'for the writer')",
        "UPDATE public.agent_notes SET body = body || '!' WHERE body LIKE 'for the %'",
        "DELETE FROM public.agent_notes WHERE body = 'for the writer!'",
        // a key given to another caller's row since: the writer's secret note moves away, the reader gets its key
        "INSERT INTO public.agent_notes (id, owner, body) VALUES (5000, 'dev-read-write', 'SECRET hunter2')",
        "UPDATE public.agent_notes SET body = 'SECRET hunter2 again' WHERE id = 5000",
        "UPDATE public.agent_notes SET id = 6000 WHERE id = 5000",
        "INSERT INTO public.agent_notes (id, owner, body) VALUES (5000, 'dev-read-only', 'the reader''s own 5000')");
    JsonArray tables = new JsonArray().add("agent_notes");
    List<String> seenByReader = new ArrayList<>();
    StringBuilder shown = new StringBuilder();
    ChangelogFixtures.await("the reader's changes", java.time.Duration.ofSeconds(20), () -> {
      seenByReader.clear();
      JsonArray changes = ToolResults.ok(reader, "changes_since", new JsonObject().put("cursor", readerHead).put("tables", tables))
          .getJsonArray("changes");
      shown.setLength(0);
      shown.append(changes.encode());
      changes.forEach(c -> seenByReader.add(((JsonObject) c).getString("op") + " "
          + (((JsonObject) c).getJsonObject("after") == null ? "" : ((JsonObject) c).getJsonObject("after").getString("body"))));
      return seenByReader.size() >= 2;
    });
    // only rows the reader may read now, each exactly as it is now: not the insert its update moved on from
    assertEquals(List.of("UPDATE for the reader!", "INSERT the reader's own 5000"), seenByReader, shown::toString);
    assertFalse(shown.toString().contains("hunter2") || shown.toString().contains("dev-read-write"), shown::toString);
    assertFalse(shown.toString().contains("\"before\""), "no before-image under row-level security: " + shown);
    JsonArray writerChanges = ToolResults.ok(writer, "changes_since", new JsonObject().put("cursor", writerHead).put("tables", tables))
        .getJsonArray("changes");
    assertFalse(writerChanges.encode().contains("for the reader") || writerChanges.encode().contains("own 5000"), writerChanges::encode);
    assertFalse(writerChanges.encode().contains("DELETE"), "a delete on a table with row-level security is not shown: " + writerChanges.encode());
  }

  // ---- 6. cursors ----

  @Test
  void aCursorIsSealedAndBelongsToTheCallerItWasIssuedTo() {
    JsonObject args = new JsonObject().put("table", "customers").put("limit", 3);
    String cursor = ToolResults.ok(writer, "list_rows", args).getString("next_cursor");
    String decoded = new String(java.util.Base64.getUrlDecoder().decode(cursor), java.nio.charset.StandardCharsets.ISO_8859_1);
    assertFalse(decoded.contains("customer") || decoded.contains("\"k\""), "no row value is readable in a cursor");
    refused(reader, "list_rows", args.copy().put("cursor", cursor), "INVALID_CURSOR");
    ToolResults.ok(writer, "list_rows", args.copy().put("cursor", cursor));
    String queryCursor = ToolResults.ok(writer, "query", query("SELECT id FROM public.customers ORDER BY id").put("limit", 2))
        .getString("next_cursor");
    refused(reader, "query", query("SELECT id FROM public.customers ORDER BY id").put("limit", 2).put("cursor", queryCursor),
        "INVALID_CURSOR");
  }

  // ---- 7. nothing outlives the call ----

  @Test
  void aSettingOrLockACallMadeNeverReachesTheNextCallOnTheConnection() {
    refused(writer, "execute", new JsonObject().put("sql",
        "UPDATE public.sec_items SET qty = qty WHERE id = 2 AND set_config('search_path', 'it_evil', false) IS NOT NULL"),
        "INVALID_ARGUMENTS");
    // what a reviewed function leaves on the session ends with the call: the session is reset
    JsonObject args = new JsonObject().put("sql", "UPDATE public.sec_items SET qty = qty WHERE id = 2 AND public.it_sneak('it_evil')");
    JsonObject plan = ToolResults.ok(writer, "execute", args);
    ToolResults.ok(writer, "execute", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "iso-" + UUID.randomUUID()));
    JsonObject next = ToolResults.ok(writer, "execute", new JsonObject().put("sql",
        "UPDATE public.sec_items SET qty = qty WHERE current_setting('search_path') = 'it_evil'"));
    assertEquals(0, next.getJsonObject("totals").getInteger("updated"), "the committed call's setting was reset");
    JsonObject path = rows(ToolResults.ok(writer, "query", query("SELECT current_setting('search_path') AS p"))).getJsonObject(0);
    assertFalse(path.getString("p").contains("it_evil"));
    ToolResults.ok(writer, "query", query("SELECT public.it_lock(4242) AS locked"));
    assertEquals(0, count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"), "the session lock ended with the call");
  }

  // ---- 8. column privileges ----

  @Test
  void aColumnTheCallerMayNotReadNeverAppearsInRowsPlansOrChanges() {
    sql(infra, DB, "DELETE FROM public.sec_people", "INSERT INTO public.sec_people VALUES (1, 'Ada', 'top-secret-1')");
    // get_row and list_rows need SELECT on the whole table; query reads the columns the role may read
    refused(reader, "list_rows", new JsonObject().put("table", "sec_people"), "NOT_FOUND");
    JsonObject listed = ToolResults.ok(reader, "query", query("SELECT id, name FROM public.sec_people"));
    assertEquals("Ada", rows(listed).getJsonObject(0).getString("name"));
    JsonObject denied = refused(reader, "query", query("SELECT secret FROM public.sec_people"), "PERMISSION_DENIED");
    assertFalse(denied.encode().contains("top-secret"), denied::encode);
    JsonObject plan = ToolResults.ok(writer, "execute", new JsonObject().put("sql", "UPDATE public.sec_people SET name = 'Ada L.' WHERE id = 1"));
    assertEquals(1, plan.getJsonObject("totals").getInteger("updated"));
    assertFalse(plan.encode().contains("top-secret"), "a plan's images show only readable columns: " + plan.encode());
    String head = ToolResults.ok(reader, "status", new JsonObject()).getString("changelog_head");
    sql(infra, DB, "UPDATE public.sec_people SET secret = 'top-secret-2', name = 'Ada' WHERE id = 1");
    List<JsonObject> changes = new ArrayList<>();
    ChangelogFixtures.await("the change in changes_since", java.time.Duration.ofSeconds(20), () -> {
      JsonObject page = ToolResults.ok(reader, "changes_since", new JsonObject().put("cursor", head)
          .put("tables", new JsonArray().add("sec_people")));
      changes.clear();
      page.getJsonArray("changes").forEach(c -> changes.add((JsonObject) c));
      return !changes.isEmpty();
    });
    JsonObject change = changes.get(0);
    assertEquals("Ada", change.getJsonObject("after").getString("name"));
    assertFalse(change.encode().contains("top-secret"), "before and after hold only readable columns: " + change.encode());
  }
}
