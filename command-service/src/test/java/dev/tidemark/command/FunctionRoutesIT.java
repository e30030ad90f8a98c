package dev.tidemark.command;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every route by which writing a table makes PostgreSQL run a function: each table below reaches
 * lo_from_bytea, which leaves a large object behind, through one route. A change through
 * execute and insert_rows, committed in one call (the writer may commit directly), is refused
 * before it runs, and no large object is left. The fixture shows that each route is real: the
 * same insert, made by the table's owner outside Tidemark, leaves one.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FunctionRoutesIT {

  static final String DB = "function_routes_it";

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    harness = CommandRole.start(infra, DB, Map.of(ConfigKey.COMMAND_DIRECT_COMMIT_ROLES, "tidemark_writer",
        ConfigKey.COMMAND_MIGRATE_ROLES, "tidemark_writer",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.fr_reviewed_trg"));
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.fr_check, public.fr_default, public.fr_generated, public.fr_domain, public.fr_index,"
            + " public.fr_partial, public.fr_policy, public.fr_trigger, public.fr_view_base, public.fr_plain, public.fr_rule,"
            + " public.fr_rule_log, public.fr_parent, public.fr_child, public.fr_reviewed, public.fr_migrated, public.fr_owned CASCADE",
        "DROP DOMAIN IF EXISTS public.fr_posd",
        // a SQL-standard body: PostgreSQL parses it and records what it calls
        "CREATE OR REPLACE FUNCTION public.fr_wrap() RETURNS oid STABLE LANGUAGE sql RETURN lo_from_bytea(0, 'w')",
        "CREATE OR REPLACE FUNCTION public.fr_imm(bytea) RETURNS oid IMMUTABLE LANGUAGE sql RETURN lo_from_bytea(0, $1)",
        // a quoted body: PostgreSQL keeps it as text
        "CREATE OR REPLACE FUNCTION public.fr_wrap_quoted() RETURNS oid STABLE LANGUAGE sql AS $$ SELECT lo_from_bytea(0, 'q') $$",
        // SET keeps PostgreSQL from inlining it, so that the statement's plan names it and the check reads its body
        "CREATE OR REPLACE FUNCTION public.fr_harmless(int) RETURNS int STABLE LANGUAGE sql SET search_path = public"
            + " RETURN abs($1) + length(current_user)",
        "CREATE OR REPLACE FUNCTION public.fr_trg() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN PERFORM lo_from_bytea(0, 't'); RETURN NEW; END $$",
        "CREATE OR REPLACE FUNCTION public.fr_reviewed_trg() RETURNS trigger LANGUAGE plpgsql AS"
            + " $$ BEGIN NEW.note := 'stamped'; RETURN NEW; END $$",
        "CREATE DOMAIN public.fr_posd AS int CHECK (VALUE > 0 AND lo_from_bytea(0, 'x') > 0)",
        "CREATE TABLE public.fr_check (id int PRIMARY KEY, n int CHECK (lo_from_bytea(0, 'c') > 0))",
        "CREATE TABLE public.fr_default (id int PRIMARY KEY, o oid DEFAULT lo_from_bytea(0, 'd'))",
        "CREATE TABLE public.fr_generated (id int PRIMARY KEY, g oid GENERATED ALWAYS AS (public.fr_imm('g')) STORED)",
        "CREATE TABLE public.fr_domain (id int PRIMARY KEY, v public.fr_posd)",
        "CREATE TABLE public.fr_index (id int PRIMARY KEY)",
        "CREATE INDEX fr_index_expr ON public.fr_index ((public.fr_imm('i')::int8 + id))",
        "CREATE TABLE public.fr_partial (id int PRIMARY KEY)",
        "CREATE INDEX fr_partial_where ON public.fr_partial (id) WHERE public.fr_imm('p') > 0",
        "CREATE TABLE public.fr_policy (id int PRIMARY KEY)",
        "ALTER TABLE public.fr_policy ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY fr_policy_check ON public.fr_policy USING (true) WITH CHECK (lo_from_bytea(0, 'r') > 0)",
        "CREATE TABLE public.fr_trigger (id int PRIMARY KEY)",
        "CREATE TRIGGER fr_trigger_lo BEFORE INSERT ON public.fr_trigger FOR EACH ROW EXECUTE FUNCTION public.fr_trg()",
        "CREATE TABLE public.fr_view_base (id int PRIMARY KEY)",
        "CREATE VIEW public.fr_view AS SELECT * FROM public.fr_view_base WHERE public.fr_wrap() > 0 WITH CHECK OPTION",
        "CREATE TABLE public.fr_plain (id int PRIMARY KEY, o oid)",
        "CREATE TABLE public.fr_rule_log (o oid)",
        "CREATE TABLE public.fr_rule (id int PRIMARY KEY)",
        "CREATE RULE fr_rule_also AS ON INSERT TO public.fr_rule DO ALSO INSERT INTO public.fr_rule_log VALUES (lo_from_bytea(0, 'u'))",
        "CREATE TABLE public.fr_parent (id int PRIMARY KEY)",
        "CREATE TABLE public.fr_child (id int PRIMARY KEY, parent_id int REFERENCES public.fr_parent ON DELETE CASCADE)",
        "CREATE TRIGGER fr_child_lo BEFORE DELETE ON public.fr_child FOR EACH ROW EXECUTE FUNCTION public.fr_trg()",
        "CREATE TABLE public.fr_reviewed (id int PRIMARY KEY, note text)",
        "CREATE TRIGGER fr_reviewed_stamp BEFORE INSERT ON public.fr_reviewed FOR EACH ROW EXECUTE FUNCTION public.fr_reviewed_trg()",
        "INSERT INTO public.fr_parent VALUES (1)",
        // a table the writer owns, so that it may migrate it, with a route its owner made before
        "CREATE TABLE public.fr_owned (id int PRIMARY KEY, n int CHECK (lo_from_bytea(0, 'o') > 0))",
        "ALTER TABLE public.fr_owned OWNER TO tidemark_writer",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO tidemark_writer",
        "GRANT CREATE ON SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])",
        // PostgreSQL ran fr_imm while it created the indexes and the generated column (it folds an immutable call of constants)
        "SELECT lo_unlink(oid) FROM pg_largeobject_metadata");
    // each route is real: written by the owner, outside Tidemark, it leaves a large object
    for (String insert : new String[] {"INSERT INTO public.fr_check VALUES (1, 1)", "INSERT INTO public.fr_default (id) VALUES (1)",
        "INSERT INTO public.fr_generated (id) VALUES (1)", "INSERT INTO public.fr_domain VALUES (1, 1)",
        "INSERT INTO public.fr_index VALUES (1)", "INSERT INTO public.fr_partial VALUES (1)", "INSERT INTO public.fr_trigger VALUES (1)",
        "INSERT INTO public.fr_view VALUES (1)", "INSERT INTO public.fr_rule VALUES (1)"}) {
      assertTrue(largeObjectsMadeBy(insert) > 0, insert);
    }
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  @AfterEach
  void nothingWasLeftBehind() {
    assertEquals(0, largeObjects(), "a refused change left a large object behind");
  }

  // ---- helpers ----

  private long largeObjects() {
    return TestDatabases.count(infra, DB, "SELECT count(*) FROM pg_largeobject_metadata");
  }

  /** The large objects {@code insert} makes as the table's owner, in a transaction rolled back. */
  private long largeObjectsMadeBy(String insert) {
    try (Connection c = TestDatabases.jdbc(infra, DB)) {
      c.setAutoCommit(false);
      try (var st = c.createStatement()) {
        long before = count(st);
        st.execute(insert);
        return count(st) - before;
      } finally {
        c.rollback();
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static long count(java.sql.Statement st) throws java.sql.SQLException {
    try (var rs = st.executeQuery("SELECT count(*) FROM pg_largeobject_metadata")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** A change committed in one call: without the check, what it reaches would be committed with it. */
  private JsonObject refused(String tool, JsonObject args, String code) {
    return harness.error(ServiceHarness.WRITER, tool, args.copy().put("idempotency_key", "fr-" + UUID.randomUUID()), code);
  }

  private static JsonObject execute(String sql) {
    return new JsonObject().put("sql", sql);
  }

  private static JsonObject insertRows(String table, JsonObject row) {
    return new JsonObject().put("table", table).put("rows", new JsonArray().add(row));
  }

  /** The refusal names lo_from_bytea, the table written and the object that reaches it. */
  private void refusedThrough(String table, JsonObject row, String via) {
    refusedThrough(table, row, via, table);
  }

  /** As above, where the table PostgreSQL writes is {@code written} (a view's base table). */
  private void refusedThrough(String table, JsonObject row, String via, String written) {
    JsonObject executed = refused("execute", execute("INSERT INTO public." + table + " (id) VALUES (7)"), "PERMISSION_DENIED");
    JsonObject inserted = refused("insert_rows", insertRows(table, row), "PERMISSION_DENIED");
    assertEquals(new JsonArray().add("public." + written), executed.getJsonArray("tables"), executed::encode);
    assertEquals(new JsonArray().add("public." + table), inserted.getJsonArray("tables"), inserted::encode);
    for (JsonObject error : new JsonObject[] {executed, inserted}) {
      assertTrue(error.getJsonArray("functions").contains("pg_catalog.lo_from_bytea"), error::encode);
      assertTrue(error.getJsonArray("via").stream().anyMatch(v -> String.valueOf(v).contains(via)), error::encode);
      assertTrue(error.getString("message").contains("lo_from_bytea"), error::encode);
    }
  }

  // ---- one test per route ----

  @Test
  void aCheckConstraintThatCallsARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_check", new JsonObject().put("id", 7).put("n", 1), "constraint fr_check_check");
  }

  @Test
  void aColumnDefaultThatCallsARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_default", new JsonObject().put("id", 7), "default value for column o");
  }

  @Test
  void aGeneratedColumnThatReachesARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_generated", new JsonObject().put("id", 7), "default value for column g");
  }

  @Test
  void aDomainCheckThatCallsARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_domain", new JsonObject().put("id", 7).put("v", 1), "fr_posd");
  }

  @Test
  void anIndexExpressionThatReachesARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_index", new JsonObject().put("id", 7), "index fr_index_expr");
  }

  @Test
  void aPartialIndexPredicateThatReachesARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_partial", new JsonObject().put("id", 7), "index fr_partial_where");
  }

  @Test
  void aPolicyThatCallsARefusedFunctionKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_policy", new JsonObject().put("id", 7), "policy fr_policy_check");
  }

  @Test
  void aTriggerWhoseFunctionCallsARefusedFunctionKeepsItsTableFromBeingWritten() {
    // a PL/pgSQL body is text to PostgreSQL, which cannot say what it calls: the trigger's function is refused for itself
    for (JsonObject error : new JsonObject[] {
        refused("execute", execute("INSERT INTO public.fr_trigger (id) VALUES (7)"), "PERMISSION_DENIED"),
        refused("insert_rows", insertRows("fr_trigger", new JsonObject().put("id", 7)), "PERMISSION_DENIED")}) {
      assertEquals(new JsonArray().add("public.fr_trg"), error.getJsonArray("functions"), error::encode);
      assertEquals(new JsonArray().add("trigger fr_trigger_lo on table fr_trigger"), error.getJsonArray("via"), error::encode);
      assertEquals(new JsonArray().add("public.fr_trigger"), error.getJsonArray("tables"), error::encode);
    }
  }

  @Test
  void aViewWithCheckOptionThatCallsARefusedFunctionThroughASqlFunctionIsNotWritten() {
    refusedThrough("fr_view", new JsonObject().put("id", 7), "view fr_view", "fr_view_base");
    // the base table too: PostgreSQL checks the view's condition on rows written through it
    JsonObject base = refused("execute", execute("INSERT INTO public.fr_view_base (id) VALUES (7)"), "PERMISSION_DENIED");
    assertTrue(base.getJsonArray("functions").contains("pg_catalog.lo_from_bytea"), base::encode);
  }

  @Test
  void aRuleThatAddsAStatementKeepsItsTableFromBeingWritten() {
    refusedThrough("fr_rule", new JsonObject().put("id", 7), "rule fr_rule_also");
  }

  @Test
  void aSqlFunctionWrappingARefusedFunctionIsRefusedWhereverItsBodyIsKept() {
    JsonObject parsed = refused("execute", execute("INSERT INTO public.fr_plain VALUES (7, public.fr_wrap())"), "INVALID_ARGUMENTS");
    assertEquals(new JsonArray().add("pg_catalog.lo_from_bytea"), parsed.getJsonArray("functions"), parsed::encode);
    assertTrue(parsed.getString("message").contains("fr_wrap() calls pg_catalog.lo_from_bytea"), parsed::encode);
    JsonObject quoted = refused("execute", execute("INSERT INTO public.fr_plain VALUES (7, public.fr_wrap_quoted())"),
        "INVALID_ARGUMENTS");
    assertEquals(new JsonArray().add("public.fr_wrap_quoted"), quoted.getJsonArray("functions"), quoted::encode);
    assertTrue(quoted.getString("message").contains("does not parse ahead"), quoted::encode);
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.fr_plain WHERE id = 7"));
  }

  @Test
  void aForeignKeysCascadeReachesTheTriggersOfTheTableItDeletesFrom() {
    sql(infra, DB, "INSERT INTO public.fr_child VALUES (1, 1)");
    JsonObject error = refused("delete_rows", new JsonObject().put("table", "fr_parent").put("key", 1).put("confirm", true),
        "PERMISSION_DENIED");
    assertTrue(error.getJsonArray("via").stream().anyMatch(v -> String.valueOf(v).contains("trigger fr_child_lo")), error::encode);
    assertEquals(1, TestDatabases.count(infra, DB, "SELECT count(*) FROM public.fr_child"), "nothing was deleted");
  }

  @Test
  void aSqlFunctionThatCallsOnlyHarmlessFunctionsAndAReviewedTriggerPass() {
    JsonObject done = harness.ok(ServiceHarness.WRITER, "execute", execute("INSERT INTO public.fr_plain VALUES (public.fr_harmless(-9), NULL)")
        .put("idempotency_key", "fr-" + UUID.randomUUID()));
    assertEquals("commit", done.getString("mode"), done::encode);
    JsonObject stamped = harness.ok(ServiceHarness.WRITER, "insert_rows", insertRows("fr_reviewed", new JsonObject().put("id", 1))
        .put("idempotency_key", "fr-" + UUID.randomUUID()));
    assertEquals("commit", stamped.getString("mode"), stamped::encode);
    assertEquals("stamped", TestDatabases.strings(infra, DB, "SELECT note FROM public.fr_reviewed WHERE id = 1").get(0));
  }

  @Test
  void migrateCreatesNothingThatReachesARefusedFunction() {
    for (String statement : new String[] {
        "CREATE TABLE public.fr_migrated (id int PRIMARY KEY, n int CHECK (lo_from_bytea(0, 'm') > 0))",
        "ALTER TABLE public.fr_owned ADD COLUMN stamp oid DEFAULT lo_from_bytea(0, 'm')",
        "CREATE INDEX fr_owned_lo ON public.fr_owned ((public.fr_imm('m')::int8 + id))",
        "ALTER TABLE public.fr_owned ADD COLUMN d public.fr_posd"}) {
      JsonObject error = refused("migrate", new JsonObject().put("statements", new JsonArray().add(statement)), "INVALID_ARGUMENTS");
      assertEquals("function_refused", error.getString("reason"), error::encode);
      assertTrue(error.getJsonArray("functions").contains("pg_catalog.lo_from_bytea"), error::encode);
    }
    assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM pg_class WHERE relname IN ('fr_migrated', 'fr_owned_lo')"));
    assertEquals(0, TestDatabases.count(infra, DB,
        "SELECT count(*) FROM pg_attribute WHERE attrelid = 'public.fr_owned'::regclass AND attname IN ('stamp', 'd')"));
    // what a table had before is its owner's: a migration that adds a harmless column to one still runs
    JsonObject plan = harness.ok(ServiceHarness.WRITER, "migrate",
        new JsonObject().put("statements", new JsonArray().add("ALTER TABLE public.fr_owned ADD COLUMN label text DEFAULT upper('x')")));
    assertEquals("plan", plan.getString("mode"), plan::encode);
  }
}
