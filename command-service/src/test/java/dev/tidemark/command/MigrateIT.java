package dev.tidemark.command;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.DocExamples;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The migrate tool of the command role, called over the event bus as a gateway calls it, with the
 * query and changelog roles beside it, against a real PostgreSQL and Kafka: DDL planned (run and
 * rolled back), committed whole or not at all, what it loses counted and consented to, and capture
 * and the catalog following the new schema. Who is shown migrate, the prompt that walks through it
 * and the notification a migration sends are the gateway's, tested in {@code RoleToolsOverMcpIT}
 * (module gateway).
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MigrateIT {

  static final String DB = "migrate_it";

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB, "GRANT CREATE ON SCHEMA public TO tidemark_writer", "SELECT tidemark.capture_schemas(ARRAY['public'])",
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mg_other') THEN CREATE ROLE mg_other; END IF; END $$",
        "GRANT mg_other TO tidemark_writer");
    harness = CommandRole.withQuery(infra, DB, Map.of(ConfigKey.COMMAND_MIGRATE_ROLES, "tidemark_writer"));
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(harness);
  }

  @BeforeEach
  void fresh() {
    sql(infra, DB, "DROP TABLE IF EXISTS public.item, public.mg_copy, public.mg_new CASCADE");
    commit(migration("CREATE TABLE public.item (id int PRIMARY KEY, name text, price int)"));
    sql(infra, DB, "INSERT INTO public.item VALUES (1, 'apple', 3), (2, 'pear', NULL), (3, NULL, NULL)");
  }

  // ---- helpers ----

  private static JsonObject migration(String... statements) {
    return new JsonObject().put("statements", new JsonArray(List.of((Object[]) statements)));
  }

  private JsonObject plan(JsonObject args) {
    JsonObject plan = harness.ok(ServiceHarness.WRITER, "migrate", args);
    assertEquals("plan", plan.getString("mode"), plan::encode);
    return plan;
  }

  private JsonObject commit(JsonObject args) {
    JsonObject plan = plan(args);
    return harness.ok(ServiceHarness.WRITER, "migrate", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
  }

  private JsonObject error(JsonObject args, String code) {
    return harness.error(ServiceHarness.WRITER, "migrate", args, code);
  }

  private List<String> rows(String sql) {
    return TestDatabases.strings(infra, DB, sql);
  }

  private List<String> columns(String table) {
    return rows("SELECT attname FROM pg_attribute WHERE attrelid = '" + table + "'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
  }

  /** The arguments docs/change-tools.md shows in its example of migrate. */
  private static JsonObject documentedExample() {
    return DocExamples.jsonExample("change-tools.md", "## Planned schema migrations");
  }


  // ---- plan and commit ----

  @Test
  void aPlanRunsTheDdlAndRollsItBackAndTheCommitAppliesItOnce() {
    JsonObject args = documentedExample();
    JsonObject plan = plan(args);
    JsonObject item = ServiceHarness.ofTable(plan, "tables", "public.item");
    assertEquals("altered", item.getString("action"));
    assertEquals(3, item.getInteger("rows"));
    assertFalse(item.getJsonObject("before").encode().contains("qty"), item::encode);
    assertTrue(item.getJsonObject("after").getJsonArray("columns").contains(new JsonObject().put("name", "qty").put("type", "integer")
        .put("nullable", false).put("default", "0")), item::encode);
    assertTrue(item.getJsonObject("after").getJsonArray("indexes").encode().contains("item_name"), item::encode);
    assertEquals(new JsonArray(), plan.getJsonArray("lost"));
    assertFalse(plan.getBoolean("confirmation_required"));
    assertEquals(List.of("id", "name", "price"), columns("public.item"), "a plan changes nothing");

    String key = UUID.randomUUID().toString();
    JsonObject commit = args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key);
    assertEquals("commit", harness.ok(ServiceHarness.WRITER, "migrate", commit).getString("mode"));
    assertEquals(List.of("id", "name", "price", "qty"), columns("public.item"));
    JsonObject replay = harness.ok(ServiceHarness.WRITER, "migrate", commit);
    assertTrue(replay.getBoolean("replayed"), replay::encode);
    assertEquals(List.of("1"), rows("SELECT count(*) FROM pg_indexes WHERE indexname = 'item_name'"));
  }

  @Test
  void whatADropRemovesIsCountedAndNeedsConsent() {
    JsonObject args = migration("ALTER TABLE public.item DROP COLUMN price");
    JsonObject plan = plan(args);
    assertEquals(new JsonArray().add(new JsonObject().put("table", "public.item").put("column", "price").put("rows", 1)),
        plan.getJsonArray("lost"), plan::encode);
    assertTrue(plan.getBoolean("confirmation_required"));
    JsonObject refused = error(args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()),
        "DECISION_REQUIRED");
    assertTrue(refused.getString("message").contains("lost"), refused::encode);
    assertEquals(List.of("id", "name", "price"), columns("public.item"));
    harness.ok(ServiceHarness.WRITER, "migrate", args.copy().put("plan_id", plan.getString("plan_id")).put("confirm", true)
        .put("idempotency_key", UUID.randomUUID().toString()));
    assertEquals(List.of("id", "name"), columns("public.item"));

    JsonObject rewrite = plan(migration("ALTER TABLE public.item ALTER COLUMN id TYPE bigint"));
    assertEquals(new JsonArray().add(new JsonObject().put("table", "public.item").put("rows", 3).put("rewritten", true)),
        rewrite.getJsonArray("lost"), "a rewrite of every row needs consent: " + rewrite.encode());
    assertTrue(rewrite.getBoolean("confirmation_required"));

    JsonObject dropTable = plan(migration("DROP TABLE public.item"));
    assertEquals(new JsonArray().add(new JsonObject().put("table", "public.item").put("rows", 3)), dropTable.getJsonArray("lost"));
    assertEquals("dropped", ServiceHarness.ofTable(dropTable, "tables", "public.item").getString("action"));
    assertEquals(3, ServiceHarness.ofTable(dropTable, "tables", "public.item").getInteger("rows"));
  }

  @Test
  void aStatementThatFailsLeavesEveryStatementUndone() {
    JsonObject failed = error(migration("ALTER TABLE public.item ADD COLUMN a int", "ALTER TABLE public.item ADD COLUMN id int"),
        "INVALID_ARGUMENTS");
    assertEquals("statements/1", failed.getString("argument"), failed::encode);
    assertEquals("42701", failed.getString("sqlstate"));
    assertEquals(List.of("id", "name", "price"), columns("public.item"));
  }

  @Test
  void aSchemaChangedSinceThePlanIsPlanChanged() {
    JsonObject args = migration("ALTER TABLE public.item ADD COLUMN note text");
    JsonObject plan = plan(args);
    sql(infra, DB, "ALTER TABLE public.item ADD COLUMN other int");
    error(args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()), "PLAN_CHANGED");
    assertEquals(List.of("id", "name", "price", "other"), columns("public.item"));
  }

  @Test
  void captureAndTheCatalogFollowTheNewSchema() {
    commit(migration("CREATE TABLE public.mg_new (id int PRIMARY KEY, label text)"));
    JsonObject insert = new JsonObject().put("table", "mg_new").put("rows", new JsonArray().add(new JsonObject().put("id", 1).put("label", "x")));
    // capture reaches the new table (at once with the event trigger, or at the next reconcile): then its rows can be planned
    Await.that("the new table to be captured", Duration.ofSeconds(30), () -> {
      return harness.call(ServiceHarness.WRITER, "insert_rows", insert).error() == null;
    });
    JsonObject described = harness.ok(ServiceHarness.WRITER, "describe_table", new JsonObject().put("table", "item"));
    commit(migration("ALTER TABLE public.item ADD COLUMN color text"));
    Await.that("describe_table to show the new column", Duration.ofSeconds(30), () ->
        harness.ok(ServiceHarness.WRITER, "describe_table", new JsonObject().put("table", "item")).encode().contains("\"color\""));
    assertFalse(described.encode().contains("\"color\""));
  }

  // ---- bad input ----

  @Test
  void statementsOutsideAMigrationAreRefusedAndChangeNothing() {
    for (String s : List.of("INSERT INTO public.item VALUES (9, 'x', 1)", "SELECT 1", "DROP DATABASE migrate_it",
        "CREATE ROLE mg_intruder", "GRANT ALL ON public.item TO PUBLIC", "DO $$ BEGIN END $$", "CREATE TEMP TABLE t (id int)")) {
      JsonObject refused = error(migration(s), "INVALID_ARGUMENTS");
      assertEquals("statements/0", refused.getString("argument"), () -> s + ": " + refused.encode());
    }
    // comments as PostgreSQL reads them: nested, and a line comment ends at a carriage return
    for (String hidden : List.of("/* /* */ CREATE TABLE x () */ GRANT SELECT ON public.item TO PUBLIC",
        "-- x\rDELETE FROM public.item /*\nCREATE TABLE y () */")) {
      error(migration(hidden), "INVALID_ARGUMENTS");
    }
    JsonObject query = error(migration("CREATE TABLE public.mg_copy AS WITH d AS (DELETE FROM public.item RETURNING 1) SELECT 1 AS one"
        + " WHERE false"), "INVALID_ARGUMENTS");
    assertTrue(query.getString("message").contains("runs a query"), query::encode);
    JsonObject switched = error(migration("ALTER TABLE public.item ADD COLUMN who text DEFAULT set_config('role', 'mg_other', true)"),
        "PERMISSION_DENIED");
    assertEquals("statements/0", switched.getString("argument"), switched::encode);
    JsonObject rls = error(migration("ALTER TABLE public.item ENABLE ROW LEVEL SECURITY"), "INVALID_ARGUMENTS");
    assertEquals("outside_migration", rls.getString("reason"), rls::encode);
    JsonObject trigger = error(migration("ALTER TABLE public.item DISABLE TRIGGER ALL"), "INVALID_ARGUMENTS");
    assertEquals("outside_migration", trigger.getString("reason"), trigger::encode);
    JsonObject filled = error(migration("CREATE TABLE public.mg_copy AS SELECT * FROM public.item"), "INVALID_ARGUMENTS");
    assertTrue(filled.getString("message").contains("runs a query"), filled::encode);
    assertEquals(List.of(), rows("SELECT relname FROM pg_class WHERE relname IN ('mg_copy', 't')"));
    assertEquals(List.of("3"), rows("SELECT count(*) FROM public.item"));
    assertEquals(List.of("O"), rows("SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'public.item'::regclass AND tgname = 'tidemark_capture'"));
  }

  @Test
  void aCallerWhoseRoleIsNotConfiguredIsRefusedAndNothingChanges() {
    // the gateway shows migrate only to the roles of command.migrate-roles; the role refuses the others itself, read-write or not
    Caller notNamed = new Caller("it-not-migrating", "a read-write caller whose role command.migrate-roles does not name",
        "tidemark_reader", Access.READ_WRITE, List.of("*"));
    JsonObject refused = harness.error(notNamed, "migrate", migration("DROP TABLE public.item"), "PERMISSION_DENIED");
    assertTrue(refused.getString("message").contains("command.migrate-roles"), refused::encode);
    assertEquals(List.of("3"), rows("SELECT count(*) FROM public.item"));
  }
}
