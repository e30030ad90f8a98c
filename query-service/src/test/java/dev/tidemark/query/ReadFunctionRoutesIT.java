package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a read reaches beyond its plan's own calls: a function it calls (its body), a type it
 * casts to (a domain's check), a view or a policy the read tools read through. The functions here
 * reach pg_terminate_backend, which a role may call on another backend of its own: a victim
 * session of the reader's role shows that nothing ran. And txid_current, which assigns a
 * transaction id even in a read-only transaction.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReadFunctionRoutesIT {

  private SharedInfra infra;
  private ServiceHarness harness;
  private Connection victim;
  private int victimPid;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra);
    try (Connection conn = ServiceHarness.jdbc(infra); Statement st = conn.createStatement()) {
      for (String sql : new String[] {
          "DROP VIEW IF EXISTS public.rf_view, public.rf_okview",
          "DROP TABLE IF EXISTS public.rf_victims, public.rf_policy",
          "DROP DOMAIN IF EXISTS public.rf_posd",
          "DROP SEQUENCE IF EXISTS public.rf_seq",
          "CREATE TABLE public.rf_victims (pid int PRIMARY KEY)",
          // a SQL-standard body, which PostgreSQL parses; a quoted one, which it keeps as text
          "CREATE OR REPLACE FUNCTION public.rf_kill(int) RETURNS boolean STABLE LANGUAGE sql RETURN pg_terminate_backend($1)",
          "CREATE OR REPLACE FUNCTION public.rf_kill_quoted(int) RETURNS boolean STABLE LANGUAGE sql"
              + " AS $$ SELECT pg_terminate_backend($1) $$",
          "CREATE OR REPLACE FUNCTION public.rf_reviewed(int) RETURNS int STABLE LANGUAGE sql AS $$ SELECT $1 + 1 $$",
          "CREATE OR REPLACE FUNCTION public.rf_xid() RETURNS bigint STABLE LANGUAGE sql RETURN txid_current()",
          "CREATE OR REPLACE FUNCTION public.rf_harmless(int) RETURNS int STABLE LANGUAGE sql SET search_path = public"
              + " RETURN abs($1) + length(current_user)",
          "CREATE VIEW public.rf_view AS SELECT pid, public.rf_kill(pid) AS killed FROM public.rf_victims",
          "CREATE VIEW public.rf_okview AS SELECT pid, public.rf_harmless(pid) AS n FROM public.rf_victims",
          "CREATE DOMAIN public.rf_posd AS int CHECK (VALUE > 0 AND txid_current() > 0)",
          "CREATE TABLE public.rf_policy (id int PRIMARY KEY)",
          "INSERT INTO public.rf_policy VALUES (1)",
          "ALTER TABLE public.rf_policy ENABLE ROW LEVEL SECURITY",
          "CREATE POLICY rf_policy_xid ON public.rf_policy FOR SELECT USING (public.rf_xid() > 0)",
          "CREATE SEQUENCE public.rf_seq",
          "GRANT SELECT ON public.rf_victims, public.rf_view, public.rf_okview, public.rf_policy TO tidemark_reader, tidemark_writer",
          "GRANT USAGE, SELECT ON public.rf_seq TO tidemark_reader, tidemark_writer"}) {
        st.execute(sql);
      }
    }
    harness = QueryRole.start(infra, Map.of(ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.rf_reviewed"));
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  /** A session of the reader's own role, which the reader may signal. */
  @BeforeEach
  void openVictim() throws Exception {
    victim = DriverManager.getConnection(infra.postgres().jdbcUrl(ServiceHarness.DATABASE), DatabaseSetup.READER_ROLE,
        ServiceHarness.CALLER_PASSWORDS.get(DatabaseSetup.READER_ROLE));
    try (Statement st = victim.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      victimPid = rs.getInt(1);
    }
    try (Connection conn = ServiceHarness.jdbc(infra); Statement st = conn.createStatement()) {
      st.execute("TRUNCATE public.rf_victims");
      st.execute("INSERT INTO public.rf_victims VALUES (" + victimPid + ")");
    }
  }

  @AfterEach
  void victimIsAlive() throws Exception {
    try (Statement st = victim.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
      assertTrue(rs.next(), "the reader's other session was ended");
    } finally {
      victim.close();
    }
  }

  private JsonObject refused(String tool, JsonObject args, String code) {
    return harness.error(ServiceHarness.READER, tool, args, code);
  }

  private static JsonObject sql(String sql, Object... params) {
    JsonObject args = new JsonObject().put("sql", sql);
    return params.length == 0 ? args : args.put("params", new JsonArray(java.util.List.of(params)));
  }

  @Test
  void txidCurrentAndEveryFunctionThatAssignsATransactionIdIsRefusedInARead() {
    for (String statement : new String[] {"SELECT txid_current()", "SELECT pg_current_xact_id()", "SELECT public.rf_xid()"}) {
      JsonObject error = refused("query", sql(statement), "READ_ONLY");
      assertEquals(new JsonArray().add(statement.contains("xact") ? "pg_catalog.pg_current_xact_id" : "pg_catalog.txid_current"),
          error.getJsonArray("functions"), error::encode);
      assertTrue(error.getString("message").contains("assigns a transaction id"), error::encode);
    }
    // reading whether one was assigned assigns none, and the refused reads assigned none
    JsonObject read = harness.ok(ServiceHarness.READER, "query", sql("SELECT pg_current_xact_id_if_assigned() AS xid"));
    assertNull(read.getJsonArray("rows").getJsonObject(0).getValue("xid"), read::encode);
  }

  @Test
  void aSequenceIsNeitherAdvancedNorSetInARead() throws Exception {
    String before = sequence();
    // PostgreSQL refuses nextval in a read-only transaction; setval the check refuses before it runs
    JsonObject next = refused("query", sql("SELECT nextval('public.rf_seq')"), "READ_ONLY");
    assertEquals("25006", next.getString("sqlstate"), next::encode);
    JsonObject set = refused("query", sql("SELECT setval('public.rf_seq', 99)"), "READ_ONLY");
    assertEquals(new JsonArray().add("pg_catalog.setval"), set.getJsonArray("functions"), set::encode);
    assertEquals(before, sequence());
  }

  private String sequence() throws Exception {
    try (Connection conn = ServiceHarness.jdbc(infra); Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("SELECT last_value || '/' || is_called FROM public.rf_seq")) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void aSqlFunctionWrappingARefusedFunctionIsRefusedWhetherPostgresqlParsedItsBodyOrNot() {
    JsonObject parsed = refused("query", sql("SELECT public.rf_kill($1)", victimPid), "READ_ONLY");
    assertEquals(new JsonArray().add("pg_catalog.pg_terminate_backend"), parsed.getJsonArray("functions"), parsed::encode);
    assertTrue(parsed.getString("message").contains("rf_kill(integer) calls pg_catalog.pg_terminate_backend"), parsed::encode);
    JsonObject quoted = refused("query", sql("SELECT public.rf_kill_quoted($1)", victimPid), "READ_ONLY");
    assertEquals(new JsonArray().add("public.rf_kill_quoted"), quoted.getJsonArray("functions"), quoted::encode);
  }

  @Test
  void aViewWhoseQueryReachesARefusedFunctionIsNotRead() {
    JsonObject queried = refused("query", sql("SELECT * FROM public.rf_view"), "READ_ONLY");
    assertEquals(new JsonArray().add("pg_catalog.pg_terminate_backend"), queried.getJsonArray("functions"), queried::encode);
    for (JsonObject args : new JsonObject[] {new JsonObject().put("table", "rf_view"),
        new JsonObject().put("table", "rf_view").put("where", new JsonObject().put("column", "pid").put("op", "eq").put("value", victimPid))}) {
      JsonObject listed = refused("list_rows", args, "PERMISSION_DENIED");
      assertEquals(new JsonArray().add("public.rf_view"), listed.getJsonArray("tables"), listed::encode);
      assertTrue(listed.getString("message").startsWith("Reading public.rf_view"), listed::encode);
    }
    // a view whose function calls only harmless ones is read
    JsonObject ok = harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "rf_okview"));
    assertEquals(1, ok.getJsonArray("rows").size(), ok::encode);
  }

  @Test
  void aDomainCheckIsReadWhereAReadCastsToTheDomain() {
    for (JsonObject args : new JsonObject[] {sql("SELECT 5::public.rf_posd AS v"), sql("SELECT $1::rf_posd AS v", 5)}) {
      JsonObject error = refused("query", args, "READ_ONLY");
      assertEquals(new JsonArray().add("pg_catalog.txid_current"), error.getJsonArray("functions"), error::encode);
      assertTrue(error.getJsonArray("via").contains("type rf_posd"), error::encode);
    }
  }

  @Test
  void aPolicyThatReachesARefusedFunctionIsNotRead() {
    refused("query", sql("SELECT * FROM public.rf_policy"), "READ_ONLY");
    JsonObject listed = refused("list_rows", new JsonObject().put("table", "rf_policy"), "PERMISSION_DENIED");
    assertTrue(listed.getJsonArray("via").contains("policy rf_policy_xid on table rf_policy"), listed::encode);
    refused("get_row", new JsonObject().put("table", "rf_policy").put("key", 1), "PERMISSION_DENIED");
  }

  @Test
  void aFunctionTheOperatorReviewedIsTakenAsItIs() {
    JsonObject read = harness.ok(ServiceHarness.READER, "query", sql("SELECT public.rf_reviewed(1) AS n, public.rf_harmless(-2) AS m"));
    assertEquals(2, read.getJsonArray("rows").getJsonObject(0).getInteger("n"), read::encode);
  }
}
