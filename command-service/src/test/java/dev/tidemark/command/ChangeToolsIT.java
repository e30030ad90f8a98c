package dev.tidemark.command;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.TestDatabases;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
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
 * The change tools of the command role, called over the event bus as a gateway calls them, against a real PostgreSQL: plan, confirm,
 * commit, idempotency, errors. The fixture is a chain of four tables with ON DELETE CASCADE
 * (region, account, invoice, line) and a trigger that deletes items when an archive row is inserted.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChangeToolsIT {

  static final String DB = "change_tools_it";

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    // the harness prepares the database and starts the relay before the fixture, which capture must follow
    // the fixture's triggers are PL/pgSQL, which the function check refuses unless the operator reviewed them: these tests
    // are about what such a trigger does once trusted (its writes are planned, what it leaves on a session is reset)
    harness = CommandRole.start(infra, DB, Map.of(ConfigKey.COMMAND_DIRECT_COMMIT_ROLES, "tidemark_writer",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.ct_purge,public.ct_leak,public.ct_plant"));
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.ct_line, public.ct_invoice, public.ct_account, public.ct_region, public.ct_item,"
            + " public.ct_archive, public.ct_locked CASCADE",
        "CREATE TABLE public.ct_region (id int PRIMARY KEY, name text NOT NULL)",
        "CREATE TABLE public.ct_account (id int PRIMARY KEY, region_id int NOT NULL REFERENCES public.ct_region ON DELETE CASCADE,"
            + " email text UNIQUE, balance int NOT NULL DEFAULT 0 CHECK (balance >= 0))",
        "CREATE TABLE public.ct_invoice (id int PRIMARY KEY, account_id int NOT NULL REFERENCES public.ct_account ON DELETE CASCADE)",
        "CREATE TABLE public.ct_line (id int PRIMARY KEY, invoice_id int NOT NULL REFERENCES public.ct_invoice ON DELETE CASCADE, amount int)",
        "CREATE TABLE public.ct_item (id serial PRIMARY KEY, name text NOT NULL, qty int NOT NULL DEFAULT 0)",
        "CREATE TABLE public.ct_archive (id int PRIMARY KEY)",
        "CREATE TABLE public.ct_locked (id int PRIMARY KEY)",
        "CREATE OR REPLACE FUNCTION public.ct_purge() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN DELETE FROM public.ct_item WHERE qty = NEW.id; RETURN NEW; END $$",
        "CREATE TRIGGER ct_purge AFTER INSERT ON public.ct_archive FOR EACH ROW EXECUTE FUNCTION public.ct_purge()",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.ct_region, public.ct_account, public.ct_invoice, public.ct_line,"
            + " public.ct_item, public.ct_archive TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "REVOKE ALL ON public.ct_locked FROM tidemark_writer",
        "GRANT SELECT ON public.ct_locked TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  @BeforeEach
  void seed() {
    sql(infra, DB,
        "TRUNCATE public.ct_region, public.ct_account, public.ct_invoice, public.ct_line, public.ct_item, public.ct_archive CASCADE",
        "INSERT INTO public.ct_region VALUES (1, 'north'), (2, 'south')",
        "INSERT INTO public.ct_account VALUES (10, 1, 'a@example.com', 5), (11, 1, 'b@example.com', 5), (20, 2, 'c@example.com', 5)",
        "INSERT INTO public.ct_invoice VALUES (100, 10), (101, 11), (200, 20)",
        "INSERT INTO public.ct_line VALUES (1000, 100, 1), (1001, 100, 2), (1002, 101, 3), (2000, 200, 4)",
        "INSERT INTO public.ct_item (name, qty) VALUES ('apple', 0), ('pear', 5), ('plum', 0)");
  }

  // ---- helpers ----

  private JsonObject ok(String tool, JsonObject args) {
    return harness.ok(ServiceHarness.WRITER, tool, args);
  }

  private JsonObject error(String tool, JsonObject args, String code) {
    return harness.error(ServiceHarness.WRITER, tool, args, code);
  }


  private static JsonObject commitArgs(JsonObject args, JsonObject plan, String key) {
    return args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key);
  }

  private long count(String sql) {
    try (Connection c = TestDatabases.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private List<String> strings(String sql) {
    return TestDatabases.strings(infra, DB, sql);
  }


  private static String key() {
    return "k-" + UUID.randomUUID();
  }

  // ---- plans ----

  @Test
  void aDeleteInsideACteIsPlannedAsARemovalAndNothingIsWritten() {
    JsonObject plan = ok("execute", new JsonObject()
        .put("sql", "WITH gone AS (DELETE FROM public.ct_line WHERE invoice_id = $1 RETURNING id) SELECT count(*) FROM gone")
        .put("params", new JsonArray().add(100)));
    assertEquals("plan", plan.getString("mode"));
    assertEquals(2, ServiceHarness.ofTable(plan, "changes", "public.ct_line").getInteger("deleted"));
    assertEquals(true, plan.getBoolean("confirmation_required"));
    assertTrue(plan.getString("plan_id").startsWith("p4.") && plan.getString("plan_id").length() <= 48);
    assertNotNull(plan.getString("expires_at"));
    assertEquals(4, count("SELECT count(*) FROM public.ct_line"), "a plan writes nothing");
  }

  @Test
  void aDeleteThatCascadesThreeTablesAwayReportsEveryRemovedRowWithBeforeImages() {
    JsonObject plan = ok("delete_rows", new JsonObject().put("table", "ct_region").put("key", 1));
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.ct_region").getInteger("deleted"));
    assertEquals(2, ServiceHarness.ofTable(plan, "changes", "public.ct_account").getInteger("deleted"));
    assertEquals(2, ServiceHarness.ofTable(plan, "changes", "public.ct_invoice").getInteger("deleted"));
    assertEquals(3, ServiceHarness.ofTable(plan, "changes", "public.ct_line").getInteger("deleted"), "three tables away from the row deleted");
    assertEquals(8, plan.getJsonObject("totals").getInteger("deleted"));
    assertEquals(true, plan.getBoolean("confirmation_required"));
    JsonObject sample = plan.getJsonArray("samples").stream().map(JsonObject.class::cast)
        .filter(s -> s.getString("table").equals("public.ct_region")).findFirst().orElseThrow();
    assertEquals("north", sample.getJsonObject("before").getString("name"));
    assertEquals(2, count("SELECT count(*) FROM public.ct_region"));
    assertEquals(4, count("SELECT count(*) FROM public.ct_line"));
  }

  @Test
  void anInsertWhoseTriggerDeletesRowsIsPlannedAsARemoval() {
    JsonObject plan = ok("insert_rows", new JsonObject().put("table", "ct_archive").put("rows", new JsonArray().add(new JsonObject().put("id", 0))));
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.ct_archive").getInteger("inserted"));
    assertEquals(2, ServiceHarness.ofTable(plan, "changes", "public.ct_item").getInteger("deleted"), "the trigger deletes the two items with qty 0");
    assertEquals(true, plan.getBoolean("confirmation_required"));
    assertEquals(3, count("SELECT count(*) FROM public.ct_item"));
  }

  @Test
  void aTransactionsStatementsSeeTheOnesBeforeThem() {
    JsonObject plan = ok("transaction", new JsonObject().put("statements", new JsonArray()
        .add(new JsonObject().put("sql", "INSERT INTO public.ct_item (id, name) VALUES (50, 'fig')"))
        .add(new JsonObject().put("sql", "UPDATE public.ct_item SET qty = $1 WHERE id = 50").put("params", new JsonArray().add(9)))));
    JsonObject items = ServiceHarness.ofTable(plan, "changes", "public.ct_item");
    assertEquals(1, items.getInteger("inserted"));
    assertEquals(1, items.getInteger("updated"));
    assertEquals(false, plan.getBoolean("confirmation_required"));
    assertEquals(0, count("SELECT count(*) FROM public.ct_item WHERE id = 50"));
  }

  // ---- commits ----

  @Test
  void aCommitMakesThePlannedChangeAndItsChangelogRowsCarryCallerToolKeyAndPlanId() {
    JsonObject args = new JsonObject().put("table", "ct_account").put("key", 10).put("set", new JsonObject().put("balance", 7));
    JsonObject plan = ok("update_rows", args);
    assertEquals(1, plan.getJsonObject("totals").getInteger("updated"));
    String key = key();
    JsonObject done = ok("update_rows", commitArgs(args, plan, key));
    assertEquals("commit", done.getString("mode"));
    assertEquals(false, done.getBoolean("replayed"));
    assertEquals(key, done.getString("idempotency_key"));
    assertEquals(7, count("SELECT balance FROM public.ct_account WHERE id = 10"));
    TestDatabases.awaitDecoded(infra, DB);
    try (Connection c = TestDatabases.jdbc(infra, DB); var ps = c.prepareStatement(
        "SELECT c.op, a.caller, a.tool, a.plan_id FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
            + " WHERE a.idempotency_key = ?")) {
      ps.setString(1, key);
      ResultSet r = ps.executeQuery();
      assertTrue(r.next(), "the committed change is in the changelog");
      assertEquals("UPDATE", r.getString(1));
      assertEquals(ServiceHarness.WRITER.name(), r.getString(2));
      assertEquals("update_rows", r.getString(3));
      assertEquals(plan.getString("plan_id"), r.getString(4));
      assertFalse(r.next(), "one row changed, one changelog row");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void retryWithSameKeyReturnsStoredOutcomeAndChangesNothing() {
    JsonObject args = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "kiwi")));
    JsonObject plan = ok("insert_rows", args);
    String key = key();
    JsonObject first = ok("insert_rows", commitArgs(args, plan, key));
    JsonObject again = ok("insert_rows", commitArgs(args, plan, key));
    assertEquals(false, first.getBoolean("replayed"));
    assertEquals(true, again.getBoolean("replayed"));
    assertEquals(first.getJsonArray("changes"), again.getJsonArray("changes"));
    assertEquals(1, count("SELECT count(*) FROM public.ct_item WHERE name = 'kiwi'"));
    TestDatabases.awaitDecoded(infra, DB);
    assertEquals(1, count("SELECT count(*) FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
        + " WHERE a.idempotency_key = '" + key + "'"));
  }

  @Test
  void theSameKeyWithOtherArgumentsIsAnIdempotencyConflict() {
    JsonObject args = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "lime")));
    JsonObject plan = ok("insert_rows", args);
    String key = key();
    ok("insert_rows", commitArgs(args, plan, key));
    JsonObject other = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "lemon")));
    JsonObject otherPlan = ok("insert_rows", other);
    error("insert_rows", commitArgs(other, otherPlan, key), "IDEMPOTENCY_CONFLICT");
    assertEquals(0, count("SELECT count(*) FROM public.ct_item WHERE name = 'lemon'"));
  }

  @Test
  void aKeyOlderThanItsRetentionIsForgottenSoItMayNameANewChange() {
    JsonObject args = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "old")));
    String key = key();
    ok("insert_rows", commitArgs(args, ok("insert_rows", args), key));
    sql(infra, DB, "UPDATE tidemark.idempotency SET created_at = now() - interval '25 hours' WHERE key = '" + key + "'");
    JsonObject other = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "new")));
    JsonObject done = ok("insert_rows", commitArgs(other, ok("insert_rows", other), key));
    assertEquals(false, done.getBoolean("replayed"), "24 hours by default: the old outcome no longer answers for the key");
    assertEquals(1, count("SELECT count(*) FROM public.ct_item WHERE name = 'new'"));
    assertEquals(1, count("SELECT count(*) FROM tidemark.idempotency WHERE key = '" + key + "' AND created_at > now() - interval '1 hour'"));
  }

  @Test
  void aCommitWithoutAnIdempotencyKeyIsInvalidArguments() {
    JsonObject args = new JsonObject().put("table", "ct_account").put("key", 10).put("set", new JsonObject().put("balance", 8));
    JsonObject plan = ok("update_rows", args);
    JsonObject e = error("update_rows", args.copy().put("plan_id", plan.getString("plan_id")), "INVALID_ARGUMENTS");
    assertEquals("idempotency_key", e.getString("argument"));
    assertEquals(5, count("SELECT balance FROM public.ct_account WHERE id = 10"));
  }

  @Test
  void aPlanCommittedUnderOneKeyIsPlanChangedUnderAnother() {
    JsonObject args = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "date")));
    JsonObject plan = ok("insert_rows", args);
    ok("insert_rows", commitArgs(args, plan, key()));
    error("insert_rows", commitArgs(args, plan, key()), "PLAN_CHANGED");
    assertEquals(1, count("SELECT count(*) FROM public.ct_item WHERE name = 'date'"));
  }

  @Test
  void aTamperedExpiredForeignOrOtherArgumentsPlanIdIsInvalidPlanAndWritesNothing() {
    JsonObject args = new JsonObject().put("table", "ct_account").put("key", 11).put("set", new JsonObject().put("balance", 1));
    String planId = ok("update_rows", args).getString("plan_id");
    char[] chars = planId.toCharArray();
    int at = planId.indexOf('.') + 5;
    chars[at] = chars[at] == 'A' ? 'B' : 'A';
    dev.tidemark.keys.KeyRing ring = TestDatabases.keyRing(infra, DB);
    PlanCodec codec = new PlanCodec(() -> ring);
    String inputHash = Canonical.inputHash("update_rows", args);
    PlanCodec.Plan real = null;
    // the caller is covered by the MAC: the plan verifies for the id of the caller that made it
    real = codec.decode(planId, ServiceHarness.WRITER.id(), "update_rows", inputHash);
    assertNotNull(real, "the plan opens for its caller, tool and arguments");
    String expired = codec.encode(new PlanCodec.Plan(real.caller(), real.tool(), real.inputHash(), real.fingerprint(),
        System.currentTimeMillis() - 1, real.removes()));
    String foreign = codec.encode(new PlanCodec.Plan("someone-else", real.tool(), real.inputHash(), real.fingerprint(),
        real.expiresAt(), real.removes()));
    byte[] otherSecret = new byte[32];
    new java.security.SecureRandom().nextBytes(otherSecret);
    dev.tidemark.keys.KeyRing other = new dev.tidemark.keys.KeyRing(List.of(
        new dev.tidemark.keys.KeyRing.Key(ring.signing().id(), otherSecret, 0, Long.MAX_VALUE)));
    String otherCluster = new PlanCodec(() -> other).encode(real);
    for (String bad : List.of(new String(chars), expired, foreign, otherCluster, "not-a-plan")) {
      JsonObject e = error("update_rows", args.copy().put("plan_id", bad).put("idempotency_key", key()), "INVALID_PLAN");
      assertEquals("plan_id", e.getString("argument"));
    }
    JsonObject otherArgs = args.copy().put("set", new JsonObject().put("balance", 2));
    error("update_rows", otherArgs.put("plan_id", planId).put("idempotency_key", key()), "INVALID_PLAN");
    assertEquals(5, count("SELECT balance FROM public.ct_account WHERE id = 11"));
    assertEquals(Canonical.inputHash("update_rows", args), real.inputHash(), "the plan is bound to the canonical arguments");
  }

  @Test
  void aRemovalWithoutConfirmIsDecisionRequiredWithAMessageAndWithConfirmItCommits() {
    JsonObject args = new JsonObject().put("table", "ct_region").put("key", 2);
    JsonObject plan = ok("delete_rows", args);
    JsonObject e = error("delete_rows", commitArgs(args, plan, key()), "DECISION_REQUIRED");
    assertTrue(e.getString("message").contains("confirm: true"), e.encode());
    assertTrue(e.getString("message").contains("deletes 1 row in public.ct_line"), e.encode());
    assertEquals(4, e.getJsonObject("totals").getInteger("deleted"));
    assertTrue(e.getString("question").contains("\nDELETE public.ct_line [2000] {\"id\":2000,"),
        "the question carries the rows the cascade removes, for the person who decides: " + e.encode());
    assertEquals(1, count("SELECT count(*) FROM public.ct_region WHERE id = 2"), "nothing written");
    JsonObject done = ok("delete_rows", commitArgs(args, plan, key()).put("confirm", true));
    assertEquals(4, done.getJsonObject("totals").getInteger("deleted"));
    assertEquals(0, count("SELECT count(*) FROM public.ct_line WHERE id = 2000"), "the cascade was committed");
  }

  @Test
  void aWriteToATouchedRowMakesTheCommitPlanChangedButAWriteToAnUnrelatedRowDoesNot() {
    JsonObject args = new JsonObject().put("table", "ct_account").put("where",
        new JsonObject().put("column", "region_id").put("op", "eq").put("value", 1)).put("set", new JsonObject().put("balance", 9));
    JsonObject plan = ok("update_rows", args);
    sql(infra, DB, "UPDATE public.ct_account SET balance = 6 WHERE id = 20");  // unrelated: region 2
    ok("update_rows", commitArgs(args, plan, key()));
    assertEquals(2, count("SELECT count(*) FROM public.ct_account WHERE balance = 9"));

    JsonObject again = args.copy().put("set", new JsonObject().put("balance", 3));
    JsonObject plan2 = ok("update_rows", again);
    sql(infra, DB, "UPDATE public.ct_account SET email = 'moved@example.com' WHERE id = 11");  // touched by the plan
    error("update_rows", commitArgs(again, plan2, key()), "PLAN_CHANGED");
    assertEquals(0, count("SELECT count(*) FROM public.ct_account WHERE balance = 3"), "nothing written");
  }

  @Test
  void aRoleConfiguredForDirectCommitCommitsAnInsertInOneCallButNotADeletion() {
    JsonObject insert = new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "quince")))
        .put("idempotency_key", key());
    JsonObject done = ok("insert_rows", insert);
    assertEquals("commit", done.getString("mode"));
    assertNull(done.getValue("plan_id"));
    assertEquals(1, count("SELECT count(*) FROM public.ct_item WHERE name = 'quince'"));
    error("delete_rows", new JsonObject().put("table", "ct_item").put("where", new JsonObject().put("column", "name").put("op", "eq")
        .put("value", "apple")).put("idempotency_key", key()), "DECISION_REQUIRED");
    assertEquals(1, count("SELECT count(*) FROM public.ct_item WHERE name = 'apple'"));
  }

  @Test
  void aChangeConnectionKeepsItsPreparedStatementsButNothingATriggerLeftOnItsSession() {
    // the trigger records what its session holds when it fires, then leaves a setting and a
    // session advisory lock behind: the next change on that connection must find neither
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.ct_session_seen",
        "CREATE TABLE public.ct_session_seen (id serial PRIMARY KEY, n int NOT NULL, pid int, leaked text, prepared int)",
        "CREATE OR REPLACE FUNCTION public.ct_leak() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " NEW.pid := pg_backend_pid(); NEW.leaked := current_setting('ct.leak', true);"
            + " NEW.prepared := (SELECT count(*) FROM pg_prepared_statements);"
            + " PERFORM set_config('ct.leak', 'left behind', false); PERFORM pg_advisory_lock(4242);"
            + " RETURN NEW; END $$",
        "CREATE TRIGGER ct_leak BEFORE INSERT ON public.ct_session_seen FOR EACH ROW EXECUTE FUNCTION public.ct_leak()",
        "GRANT SELECT, INSERT ON public.ct_session_seen TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    for (int n = 0; n < 6; n++) {
      assertEquals("commit", ok("insert_rows", new JsonObject().put("table", "ct_session_seen")
          .put("rows", new JsonArray().add(new JsonObject().put("n", n))).put("idempotency_key", key())).getString("mode"));
    }
    assertEquals(6, count("SELECT count(*) FROM public.ct_session_seen WHERE leaked IS NULL OR leaked = ''"),
        "a session setting a trigger made outlived its call: " + strings("SELECT leaked FROM public.ct_session_seen"));
    assertEquals(0, count("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"),
        "a session advisory lock a trigger took outlived its call");
    // a later call on a connection an earlier call used still has the statements Tidemark prepared there
    assertTrue(count("SELECT count(*) FROM public.ct_session_seen s WHERE s.prepared > 0"
        + " AND EXISTS (SELECT 1 FROM public.ct_session_seen e WHERE e.pid = s.pid AND e.n < s.n)") > 0,
        "no change found the statements of an earlier one prepared: " + strings("SELECT pid || ':' || prepared FROM public.ct_session_seen ORDER BY n"));
  }

  @Test
  void aSessionWhereATriggerPreparedOrDroppedStatementsServesNoFurtherCall() {
    // a trigger sees Tidemark's statements in pg_prepared_statements and could put SQL of its own
    // under one's name for the next call of the role to run: such a session must end with its call
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.ct_plant_seen",
        "CREATE TABLE public.ct_plant_seen (id serial PRIMARY KEY, n int NOT NULL, pid int, planted int)",
        "CREATE OR REPLACE FUNCTION public.ct_plant() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            + " NEW.pid := pg_backend_pid(); NEW.planted := (SELECT count(*) FROM pg_prepared_statements WHERE from_sql);"
            + " IF NEW.n = 0 THEN EXECUTE 'PREPARE ct_planted AS SELECT 1'; END IF;"
            + " IF NEW.n = 100 THEN EXECUTE 'DEALLOCATE ALL'; END IF;"
            + " RETURN NEW; END $$",
        "CREATE TRIGGER ct_plant BEFORE INSERT ON public.ct_plant_seen FOR EACH ROW EXECUTE FUNCTION public.ct_plant()",
        "GRANT SELECT, INSERT ON public.ct_plant_seen TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    java.util.function.IntFunction<JsonObject> insert = n -> new JsonObject().put("table", "ct_plant_seen")
        .put("rows", new JsonArray().add(new JsonObject().put("n", n))).put("idempotency_key", key());
    assertEquals("commit", ok("insert_rows", insert.apply(0)).getString("mode"));
    for (int n = 1; n <= 4; n++) {
      assertEquals("commit", ok("insert_rows", insert.apply(n)).getString("mode"));
    }
    assertEquals(0, count("SELECT count(*) FROM public.ct_plant_seen WHERE n > 0 AND planted > 0"),
        "a later call ran on the session where a statement was planted");
    assertEquals(0, count("SELECT count(*) FROM public.ct_plant_seen s JOIN public.ct_plant_seen p ON p.n = 0 AND p.pid = s.pid"
        + " WHERE s.n > 0"), "the session where a statement was planted served another call");
    // a trigger that drops Tidemark's statements fails its own call, and only that one
    ToolReply dropped = harness.call(ServiceHarness.WRITER, "insert_rows", insert.apply(100));
    assertTrue(dropped.isError(), dropped.toJson()::encode);
    for (int n = 101; n <= 104; n++) {
      assertEquals("commit", ok("insert_rows", insert.apply(n)).getString("mode"));
    }
    assertEquals(0, count("SELECT count(*) FROM public.ct_plant_seen WHERE n = 100"));
  }

  @Test
  void aCommitThatLosesADeadlockIsRetriedAndCommitsOnce() throws Exception {
    long apple = count("SELECT id FROM public.ct_item WHERE name = 'apple'");
    long pear = count("SELECT id FROM public.ct_item WHERE name = 'pear'");
    String key = key();
    JsonObject args = new JsonObject().put("statements", new JsonArray()
        .add(new JsonObject().put("sql", "UPDATE public.ct_item SET qty = qty + 1 WHERE id = $1").put("params", new JsonArray().add(apple)))
        .add(new JsonObject().put("sql", "UPDATE public.ct_item SET qty = qty + 1 WHERE id = $1").put("params", new JsonArray().add(pear))))
        .put("idempotency_key", key);
    ToolReply result = losingADeadlock(args, apple, pear);
    assertNull(result.error(), result.toJson()::encode);
    JsonObject s = result.structured();
    assertEquals("commit", s.getString("mode"));
    assertEquals(2, s.getJsonObject("totals").getInteger("updated"));
    assertEquals(1, count("SELECT qty FROM public.ct_item WHERE id = " + apple), "the change was applied once, after the retry");
    assertEquals(6, count("SELECT qty FROM public.ct_item WHERE id = " + pear));
    TestDatabases.awaitDecoded(infra, DB);
    assertEquals(2, count("SELECT count(*) FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
        + " WHERE a.idempotency_key = '" + key + "'"));
  }

  @Test
  void aPlanThatLosesADeadlockIsMadeAgainAndWritesNothing() throws Exception {
    long apple = count("SELECT id FROM public.ct_item WHERE name = 'apple'");
    long pear = count("SELECT id FROM public.ct_item WHERE name = 'pear'");
    JsonObject args = new JsonObject().put("statements", new JsonArray()
        .add(new JsonObject().put("sql", "UPDATE public.ct_item SET qty = qty + 1 WHERE id = $1").put("params", new JsonArray().add(apple)))
        .add(new JsonObject().put("sql", "UPDATE public.ct_item SET qty = qty + 1 WHERE id = $1").put("params", new JsonArray().add(pear))));
    ToolReply result = losingADeadlock(args, apple, pear);
    assertNull(result.error(), result.toJson()::encode);
    assertEquals("plan", result.structured().getString("mode"));
    assertEquals(2, result.structured().getJsonObject("totals").getInteger("updated"));
    assertEquals(0, count("SELECT qty FROM public.ct_item WHERE id = " + apple), "a plan writes nothing, made once or twice");
    assertEquals(5, count("SELECT qty FROM public.ct_item WHERE id = " + pear));
  }

  /**
   * Runs {@code args} (updates of the rows {@code first}, then {@code second}) as a transaction
   * while another transaction holds {@code second} and then asks for {@code first}: the change,
   * which has waited longer, is the one PostgreSQL's deadlock check ends. The other transaction
   * commits, renaming both rows.
   */
  private ToolReply losingADeadlock(JsonObject args, long first, long second) throws Exception {
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
    try (Connection other = TestDatabases.jdbc(infra, DB)) {
      // the other transaction looks for a deadlock only long after the change has: PostgreSQL ends the
      // transaction whose check runs first, and on a loaded machine the other's could otherwise come first
      other.createStatement().execute("SET deadlock_timeout = '20s'");
      other.setAutoCommit(false);
      other.createStatement().execute("UPDATE public.ct_item SET name = name || '2' WHERE id = " + second);
      java.util.concurrent.Future<ToolReply> call = pool.submit(() -> harness.call(ServiceHarness.WRITER, "transaction", args));
      dev.tidemark.testsupport.Await.that("the change waiting for the row the other transaction holds", java.time.Duration.ofSeconds(30),
          () -> count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE public.ct_item SET qty%'") > 0);
      java.util.concurrent.Future<?> blocked = pool.submit(() -> {
        other.createStatement().execute("UPDATE public.ct_item SET name = name || '2' WHERE id = " + first);
        other.commit();
        return null;
      });
      blocked.get(60, java.util.concurrent.TimeUnit.SECONDS);
      return call.get(60, java.util.concurrent.TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
  }

  // ---- refusals ----

  @Test
  void transactionControlInATransactionIsRefusedAndNothingIsWritten() {
    for (String control : List.of("COMMIT", "BEGIN", "ROLLBACK", "SAVEPOINT s1", "  /* c */ release savepoint s1", "END")) {
      JsonObject e = error("transaction", new JsonObject().put("statements", new JsonArray()
          .add(new JsonObject().put("sql", "INSERT INTO public.ct_item (name) VALUES ('txn')"))
          .add(new JsonObject().put("sql", control))), "TRANSACTION_STATEMENT");
      assertEquals("statements/1/sql", e.getString("argument"));
    }
    assertEquals(0, count("SELECT count(*) FROM public.ct_item WHERE name = 'txn'"));
    error("execute", new JsonObject().put("sql", "COMMIT"), "TRANSACTION_STATEMENT");
  }

  @Test
  void executeRefusesAReadAUtilityStatementAndSeveralStatements() {
    error("execute", new JsonObject().put("sql", "SELECT * FROM public.ct_item"), "INVALID_ARGUMENTS");
    error("execute", new JsonObject().put("sql", "SET ROLE NONE"), "INVALID_ARGUMENTS");
    error("execute", new JsonObject().put("sql", "DELETE FROM public.ct_item; DELETE FROM public.ct_line"), "INVALID_ARGUMENTS");
    assertEquals(3, count("SELECT count(*) FROM public.ct_item"));
  }

  @Test
  void constraintViolationsNameTheConstraintTableAndColumns() {
    JsonObject unique = error("insert_rows", new JsonObject().put("table", "ct_account").put("rows", new JsonArray()
        .add(new JsonObject().put("id", 12).put("region_id", 1).put("email", "a@example.com"))), "CONSTRAINT_VIOLATION");
    assertEquals("ct_account_email_key", unique.getString("constraint"));
    assertEquals("public.ct_account", unique.getString("table"));
    assertEquals(new JsonArray().add("email"), unique.getJsonArray("columns"));
    assertFalse(unique.encode().contains("a@example.com"), "the refusal never echoes the value");

    JsonObject check = error("update_rows", new JsonObject().put("table", "ct_account").put("key", 10)
        .put("set", new JsonObject().put("balance", -1)), "CONSTRAINT_VIOLATION");
    assertEquals("ct_account_balance_check", check.getString("constraint"));
    assertEquals(new JsonArray().add("balance"), check.getJsonArray("columns"));

    JsonObject notNull = error("insert_rows", new JsonObject().put("table", "ct_item").put("rows", new JsonArray()
        .add(new JsonObject().put("qty", 1))), "CONSTRAINT_VIOLATION");
    assertEquals(new JsonArray().add("name"), notNull.getJsonArray("columns"));

    JsonObject fk = error("insert_rows", new JsonObject().put("table", "ct_account").put("rows", new JsonArray()
        .add(new JsonObject().put("id", 13).put("region_id", 99))), "CONSTRAINT_VIOLATION");
    assertEquals("ct_account_region_id_fkey", fk.getString("constraint"));
    assertEquals(new JsonArray().add("region_id"), fk.getJsonArray("columns"));
  }

  @Test
  void aChangeTheRoleMayNotMakeIsPermissionDenied() {
    error("insert_rows", new JsonObject().put("table", "ct_locked").put("rows", new JsonArray().add(new JsonObject().put("id", 1))),
        "PERMISSION_DENIED");
  }

  @Test
  void aStatementThatSwitchesItsRoleBackStaysTheCallersRoleAndCannotTakeAnother() {
    for (String role : List.of("none", "postgres")) {
      JsonObject e = error("execute", new JsonObject().put("sql",
          "UPDATE public.ct_item SET qty = 42 WHERE set_config('role', '" + role + "', true) IS NOT NULL"), "INVALID_ARGUMENTS");
      assertTrue(e.getString("message").contains("set_config"), e.encode());
    }
    assertEquals(0, count("SELECT count(*) FROM public.ct_item WHERE qty = 42"));
  }



  /**
   * The changelog role's reconcile (every second here) puts capture back on every served table, so
   * the test holds the advisory lock the reconcile takes first while the table is without capture:
   * otherwise a reconcile between the drop and the call captures the table again.
   */
  @Test
  void aChangeToATableWithoutCaptureIsUnavailableAndWritesNothing() throws Exception {
    try (Connection held = TestDatabases.jdbc(infra, DB); java.sql.Statement s = held.createStatement()) {
      s.execute("SELECT pg_advisory_lock(8388262610923431013)");
      try {
        for (String statement : List.of("DROP TABLE IF EXISTS public.ct_uncaptured",
            "CREATE TABLE public.ct_uncaptured (id int PRIMARY KEY)",
            "GRANT SELECT, INSERT ON public.ct_uncaptured TO tidemark_writer",
            "DROP TRIGGER IF EXISTS tidemark_capture ON public.ct_uncaptured")) {
          s.execute(statement);
        }
        JsonObject e = error("insert_rows", new JsonObject().put("table", "ct_uncaptured")
            .put("rows", new JsonArray().add(new JsonObject().put("id", 1))), "UNAVAILABLE");
        assertTrue(e.getString("message").contains("not captured"), e.encode());
        assertEquals(0, count("SELECT count(*) FROM public.ct_uncaptured"));
      } finally {
        s.execute("SELECT pg_advisory_unlock(8388262610923431013)");
      }
    }
  }

  @Test
  void badInputGetsAClearErrorAndWritesNothing() {
    error("insert_rows", new JsonObject().put("table", "no_such_table").put("rows", new JsonArray().add(new JsonObject().put("a", 1))),
        "NOT_FOUND");
    JsonObject column = error("insert_rows", new JsonObject().put("table", "ct_item").put("rows", new JsonArray()
        .add(new JsonObject().put("name", "x").put("colour", "red"))), "INVALID_ARGUMENTS");
    assertEquals("rows", column.getString("argument"));
    JsonObject misfit = error("insert_rows", new JsonObject().put("table", "ct_item").put("rows", new JsonArray()
        .add(new JsonObject().put("name", "x").put("qty", "many"))), "INVALID_ARGUMENTS");
    assertEquals("rows", misfit.getString("argument"));
    error("update_rows", new JsonObject().put("table", "ct_item").put("key", 999).put("set", new JsonObject().put("qty", 1)), "NOT_FOUND");
    error("delete_rows", new JsonObject().put("table", "ct_item").put("key", 999), "NOT_FOUND");
    JsonObject everyRow = error("update_rows", new JsonObject().put("table", "ct_item")
        .put("where", new JsonObject().put("column", "id").put("op", "gt").put("value", 0))
        .put("set", new JsonObject().put("qty", 1)), "DECISION_REQUIRED");
    assertEquals("every_row", everyRow.getString("reason"));
    JsonObject confirmed = ok("update_rows", new JsonObject().put("table", "ct_item")
        .put("where", new JsonObject().put("column", "id").put("op", "gt").put("value", 0))
        .put("set", new JsonObject().put("qty", 1)).put("confirm", true));
    assertEquals(3, confirmed.getJsonObject("totals").getInteger("updated"));
    JsonObject both = error("delete_rows", new JsonObject().put("table", "ct_item").put("key", 1)
        .put("where", new JsonObject().put("column", "id").put("op", "eq").put("value", 1)), "INVALID_ARGUMENTS");
    assertTrue(both.getString("message").contains("exactly one of key"), both.encode());
    assertEquals(3, count("SELECT count(*) FROM public.ct_item WHERE qty <> 1"));
  }

  /**
   * The command service keeps a table's shape between changes. Each change checks, in its own
   * transaction, that the table is still the one the shape was read from: these changes come right
   * after DDL, before any schema notice could drop the kept shape.
   */
  @Test
  void aChangeRightAfterDdlUsesTheTableAsItIsNowAndNeverAShapeKeptFromBefore() {
    sql(infra, DB, "DROP TABLE IF EXISTS public.ct_shape",
        "CREATE TABLE public.ct_shape (id serial PRIMARY KEY, name text NOT NULL, qty int)",
        "GRANT SELECT, INSERT ON public.ct_shape TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    JsonObject first = new JsonObject().put("name", "a").put("qty", 1);
    ok("insert_rows", new JsonObject().put("table", "ct_shape").put("rows", new JsonArray().add(first)).put("idempotency_key", key()));

    // a column dropped: named as a column the table no longer has, with the columns it has now
    sql(infra, DB, "ALTER TABLE public.ct_shape DROP COLUMN qty");
    JsonObject dropped = error("insert_rows", new JsonObject().put("table", "ct_shape")
        .put("rows", new JsonArray().add(new JsonObject().put("name", "b").put("qty", 2))), "INVALID_ARGUMENTS");
    assertEquals("qty", dropped.getString("column"), dropped.encode());
    assertTrue(dropped.getString("message").contains("Its columns: id, name."), dropped.encode());

    // a column added: usable at once
    sql(infra, DB, "ALTER TABLE public.ct_shape ADD COLUMN colour text NOT NULL DEFAULT 'red'");
    ok("insert_rows", new JsonObject().put("table", "ct_shape")
        .put("rows", new JsonArray().add(new JsonObject().put("name", "c").put("colour", "blue"))).put("idempotency_key", key()));
    assertEquals(List.of("blue"), strings("SELECT colour FROM public.ct_shape WHERE name = 'c'"));

    // a column's type changed, to one the old type's value would not fit
    sql(infra, DB, "ALTER TABLE public.ct_shape ALTER COLUMN colour DROP DEFAULT, ALTER COLUMN colour TYPE int USING length(colour)");
    ok("insert_rows", new JsonObject().put("table", "ct_shape")
        .put("rows", new JsonArray().add(new JsonObject().put("name", "d").put("colour", 7))).put("idempotency_key", key()));
    assertEquals(List.of("7"), strings("SELECT colour::text FROM public.ct_shape WHERE name = 'd'"));

    // the table dropped and made again under its name, with other columns
    sql(infra, DB, "DROP TABLE public.ct_shape",
        "CREATE TABLE public.ct_shape (id serial PRIMARY KEY, label text NOT NULL)",
        "GRANT SELECT, INSERT ON public.ct_shape TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    ok("insert_rows", new JsonObject().put("table", "ct_shape")
        .put("rows", new JsonArray().add(new JsonObject().put("label", "e"))).put("idempotency_key", key()));
    assertEquals(List.of("e"), strings("SELECT label FROM public.ct_shape"));

    // the right to read it revoked (INSERT kept): a table the caller may not read is not found
    sql(infra, DB, "REVOKE SELECT ON public.ct_shape FROM tidemark_writer");
    error("insert_rows", new JsonObject().put("table", "ct_shape")
        .put("rows", new JsonArray().add(new JsonObject().put("label", "f"))).put("idempotency_key", key()), "NOT_FOUND");
    assertEquals(1, count("SELECT count(*) FROM public.ct_shape"));
    sql(infra, DB, "DROP TABLE public.ct_shape");
  }

  @Test
  void aReadOnlyCallerThatReachesTheCommandServiceIsRefusedAndChangesNothing() {
    // the gateway hides change tools from a read-only caller (SingleNodeIT); the service refuses one on its own too
    for (String tool : List.of("delete_rows", "insert_rows", "update_rows", "transaction")) {
      JsonObject args = switch (tool) {
        case "delete_rows" -> new JsonObject().put("table", "ct_item").put("key", 1);
        case "insert_rows" -> new JsonObject().put("table", "ct_item").put("rows", new JsonArray().add(new JsonObject().put("name", "fig")));
        case "update_rows" -> new JsonObject().put("table", "ct_item").put("key", 1).put("set", new JsonObject().put("qty", 9));
        default -> new JsonObject().put("statements", new JsonArray().add(new JsonObject().put("sql", "DELETE FROM public.ct_item")));
      };
      ToolReply refused = harness.call(ServiceHarness.READER, tool, args.put("idempotency_key", key()));
      assertTrue(refused.isError(), () -> tool + ": " + refused.toJson().encode());
      assertTrue(List.of("READ_ONLY", "PERMISSION_DENIED").contains(refused.error().getString("code")), refused.error()::encode);
    }
    assertEquals(3, count("SELECT count(*) FROM public.ct_item"));
    assertEquals(0, count("SELECT qty FROM public.ct_item WHERE name = 'apple'"));
  }

  /**
   * A PostgreSQL built with JIT (most packaged ones) compiles a statement whose estimated cost
   * passes jit_above_cost, 100,000 by default: a hundred functions, and 50 to 100 ms of the server's
   * CPU per commit. The read of what a change captured runs in every plan and commit, so its plan
   * must stay far below that, generic or custom; it did not while the function it reads was
   * estimated at 1,000 rows and the planner copied its key-column lookup into four expressions.
   */
  @Test
  void theReadOfWhatAChangeCapturedIsPlannedFarBelowTheCostWherePostgresqlCompilesIt() throws Exception {
    try (Connection c = TestDatabases.jdbc(infra, DB); java.sql.Statement s = c.createStatement()) {
      s.execute("PREPARE captured_read(text) AS " + dev.tidemark.command.impl.ChangeSet.SQL);
      for (String mode : List.of("force_generic_plan", "force_custom_plan")) {
        s.execute("SET plan_cache_mode = " + mode);
        try (ResultSet r = s.executeQuery("EXPLAIN (FORMAT JSON) EXECUTE captured_read('not a mac')")) {
          r.next();
          String plan = r.getString(1);
          double cost = new JsonArray(plan).getJsonObject(0).getJsonObject("Plan").getDouble("Total Cost");
          assertTrue(cost < 10_000, mode + ": estimated cost " + cost + " is within reach of jit_above_cost (100,000)");
          assertEquals(1, plan.split("\"Relation Name\": \"pg_index\"", -1).length - 1,
              mode + ": the key columns are looked up once per row, not once per expression that uses them: " + plan);
        }
      }
    }
  }
}
