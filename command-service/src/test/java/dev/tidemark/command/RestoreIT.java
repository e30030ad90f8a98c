package dev.tidemark.command;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.DocExamples;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
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
 * restore_rows and undo_transaction of the command role, called over the event bus as a gateway
 * calls them, with the query and changelog roles beside it, against a real PostgreSQL and Kafka:
 * rows written by plain SQL (as any application would), found with changes_since, and put back
 * through the plan and commit of the change tools. That a read-only caller is not shown them is
 * the gateway's, tested in {@code RoleToolsOverMcpIT} (module gateway).
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RestoreIT {

  static final String DB = "restore_it";

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB,
        "DROP TABLE IF EXISTS public.rs_order, public.rs_customer, public.rs_note, public.rs_keyed CASCADE",
        "DROP VIEW IF EXISTS public.rs_view",
        "CREATE TABLE public.rs_customer (id int PRIMARY KEY, name text NOT NULL, tags text[], born date,"
            + " shout text GENERATED ALWAYS AS (upper(name)) STORED)",
        "CREATE TABLE public.rs_order (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            + " customer_id int NOT NULL REFERENCES public.rs_customer ON DELETE CASCADE, total numeric(10,2) NOT NULL)",
        "CREATE TABLE public.rs_note (id int PRIMARY KEY, body text)",
        "CREATE TABLE public.rs_keyed (id int PRIMARY KEY, body text NOT NULL)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.rs_keyed TO tidemark_writer",
        "CREATE VIEW public.rs_view AS SELECT id, name FROM public.rs_customer",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.rs_customer, public.rs_order TO tidemark_writer",
        "GRANT SELECT ON public.rs_view TO tidemark_writer",
        "REVOKE ALL ON public.rs_note FROM tidemark_writer",
        "GRANT SELECT (id), INSERT, UPDATE, DELETE ON public.rs_note TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'], ARRAY['rs_keyed'])");
    harness = CommandRole.withQuery(infra, DB, Map.of(dev.tidemark.config.ConfigKey.DATABASE_KEY_ONLY_TABLES, "rs_keyed"));
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(harness);
  }

  @BeforeEach
  void seed() {
    sql(infra, DB,
        "UPDATE tidemark.changelog_state SET pruned_commit = 0, pruned_change = 0",
        "TRUNCATE public.rs_customer, public.rs_order, public.rs_note, public.rs_keyed RESTART IDENTITY CASCADE",
        "INSERT INTO public.rs_customer (id, name, tags, born) VALUES (1, 'ada', '{x,y}', '1815-12-10'), (2, 'bob', NULL, NULL)",
        "INSERT INTO public.rs_order (customer_id, total) VALUES (1, 10.50), (1, 20.00), (2, 5.25)",
        "INSERT INTO public.rs_note VALUES (1, 'secret')",
        "INSERT INTO public.rs_keyed VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    TestDatabases.awaitDecoded(infra, DB);
  }

  // ---- helpers ----

  private JsonObject ok(String tool, JsonObject args) {
    return harness.ok(ServiceHarness.WRITER, tool, args);
  }

  private JsonObject error(String tool, JsonObject args, String code) {
    return harness.error(ServiceHarness.WRITER, tool, args, code);
  }

  /** The changes recorded since the head before {@code write} ran, once the relay has decoded them. */
  private List<JsonObject> changesOf(Runnable write) {
    String head = ok("status", new JsonObject()).getString("changelog_head");
    write.run();
    TestDatabases.awaitDecoded(infra, DB);
    List<JsonObject> out = new ArrayList<>();
    JsonObject page = ok("changes_since", new JsonObject().put("cursor", head).put("limit", 1000));
    page.getJsonArray("changes").forEach(c -> out.add((JsonObject) c));
    return out;
  }

  private static JsonObject only(List<JsonObject> changes, String table, String op) {
    List<JsonObject> found = changes.stream().filter(c -> c.getString("table").equals(table) && c.getString("op").equals(op)).toList();
    assertEquals(1, found.size(), () -> "one " + op + " of " + table + " in " + changes);
    return found.get(0);
  }

  private JsonObject commit(String tool, JsonObject args, JsonObject plan) {
    return ok(tool, args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()));
  }

  private List<String> rows(String sql) {
    return TestDatabases.strings(infra, DB, sql);
  }

  /** The plan result docs/change-tools.md shows in its example of undo_transaction. */
  private static JsonObject documentedUndoPlan() {
    return DocExamples.jsonExample("change-tools.md", "<!-- RestoreIT checks this result's changes and totals -->");
  }


  // ---- restore_rows ----

  @Test
  void aDeletedRowComesBackWithEveryValueItHadAndARetryReplays() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "DELETE FROM public.rs_order WHERE customer_id = 2",
        "DELETE FROM public.rs_customer WHERE id = 2"));
    JsonObject delete = only(changes, "rs_customer", "DELETE");
    JsonObject args = new JsonObject().put("table", "rs_customer").put("key", 2).put("before", delete.getString("position"));

    JsonObject plan = ok("restore_rows", args);
    assertEquals("plan", plan.getString("mode"));
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.rs_customer").getInteger("inserted"), plan::encode);
    assertEquals(new JsonArray(), plan.getJsonArray("changed_since"));
    assertFalse(plan.getBoolean("confirmation_required"));
    assertEquals(List.of(), rows("SELECT name FROM public.rs_customer WHERE id = 2"), "a plan writes nothing");

    String key = UUID.randomUUID().toString();
    JsonObject committed = ok("restore_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
    assertEquals("commit", committed.getString("mode"));
    assertEquals(List.of("bob|BOB"), rows("SELECT name || '|' || shout FROM public.rs_customer WHERE id = 2"),
        "the row is back; its generated column is computed again");

    JsonObject replay = ok("restore_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", key));
    assertTrue(replay.getBoolean("replayed"), replay::encode);
    assertEquals(List.of("1"), rows("SELECT count(*) FROM public.rs_customer WHERE id = 2"));
  }

  @Test
  void anUpdatedRowGetsItsEarlierValuesAndALaterChangeIsOverwrittenOnlyOnPurpose() {
    List<JsonObject> first = changesOf(() -> sql(infra, DB,
        "UPDATE public.rs_customer SET name = 'ada lovelace', tags = '{z}', born = NULL WHERE id = 1"));
    String position = only(first, "rs_customer", "UPDATE").getString("position");
    changesOf(() -> sql(infra, DB, "UPDATE public.rs_customer SET name = 'countess' WHERE id = 1"));
    JsonObject args = new JsonObject().put("table", "public.rs_customer").put("key", new JsonObject().put("id", 1)).put("before", position);

    JsonObject plan = ok("restore_rows", args);
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.rs_customer").getInteger("updated"));
    JsonArray since = plan.getJsonArray("changed_since");
    assertEquals(1, since.size(), plan::encode);
    assertEquals(new JsonArray().add(1), since.getJsonObject(0).getJsonArray("key"));
    assertEquals("UPDATE", since.getJsonObject(0).getJsonArray("changes").getJsonObject(0).getString("op"));

    JsonObject refused = error("restore_rows", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()), "PLAN_CHANGED");
    assertEquals("overwrite", refused.getString("argument"), refused::encode);
    assertEquals(List.of("countess"), rows("SELECT name FROM public.rs_customer WHERE id = 1"), "a refused commit writes nothing");

    JsonObject over = args.copy().put("overwrite", true);
    commit("restore_rows", over, ok("restore_rows", over));
    assertEquals(List.of("ada|{x,y}|1815-12-10"), rows("SELECT name || '|' || tags::text || '|' || born FROM public.rs_customer WHERE id = 1"));
  }

  @Test
  void aRowThatDiffersFromWhatTheChangelogLastRecordedIsReportedAsChangedSince() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "UPDATE public.rs_customer SET name = 'ada2' WHERE id = 1"));
    String position = only(changes, "rs_customer", "UPDATE").getString("position");
    // a change the relay has not stored yet, made by removing the record of a later one
    List<JsonObject> later = changesOf(() -> sql(infra, DB, "UPDATE public.rs_customer SET born = '2000-01-01' WHERE id = 1"));
    String xid = only(later, "rs_customer", "UPDATE").getString("transaction");
    sql(infra, DB, "DELETE FROM tidemark.changelog WHERE xid = '" + xid + "'::xid8",
        "DELETE FROM tidemark.changelog_commit WHERE xid = '" + xid + "'::xid8");
    JsonObject args = new JsonObject().put("table", "rs_customer").put("key", 1).put("before", position);
    JsonObject plan = ok("restore_rows", args);
    JsonArray since = plan.getJsonArray("changed_since");
    assertEquals(1, since.size(), plan::encode);
    assertEquals(true, since.getJsonObject(0).getBoolean("unrecorded"), plan::encode);
    assertEquals(new JsonArray(), since.getJsonObject(0).getJsonArray("changes"));
    error("restore_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()),
        "PLAN_CHANGED");
  }

  @Test
  void aRowInsertedByTheChangeIsDeletedWithConsent() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "INSERT INTO public.rs_customer (id, name) VALUES (3, 'cy')"));
    JsonObject args = new JsonObject().put("table", "rs_customer").put("key", new JsonArray().add(3))
        .put("before", only(changes, "rs_customer", "INSERT").getString("position"));
    JsonObject plan = ok("restore_rows", args);
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.rs_customer").getInteger("deleted"));
    assertTrue(plan.getBoolean("confirmation_required"));
    error("restore_rows", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()),
        "DECISION_REQUIRED");
    commit("restore_rows", args.copy().put("confirm", true), plan);
    assertEquals(List.of("0"), rows("SELECT count(*) FROM public.rs_customer WHERE id = 3"));
  }

  // ---- undo_transaction ----

  @Test
  void undoingADeleteBringsTheCustomerBackWithTheOrdersItsCascadeRemoved() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "DELETE FROM public.rs_customer WHERE id = 1"));
    String transaction = only(changes, "rs_customer", "DELETE").getString("transaction");
    assertEquals(2, changes.stream().filter(c -> c.getString("table").equals("rs_order")).count(), "the cascade is in the changelog");
    JsonObject args = new JsonObject().put("transaction", transaction);

    JsonObject plan = ok("undo_transaction", args);
    assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.rs_customer").getInteger("inserted"), plan::encode);
    assertEquals(2, ServiceHarness.ofTable(plan, "changes", "public.rs_order").getInteger("inserted"), plan::encode);
    assertEquals(new JsonObject().put("inserted", 3).put("updated", 0).put("deleted", 0), plan.getJsonObject("totals"));
    JsonObject documented = documentedUndoPlan();
    assertEquals(documented.getJsonArray("changes"), plan.getJsonArray("changes"), "docs/change-tools.md shows this plan");
    assertEquals(documented.getJsonObject("totals"), plan.getJsonObject("totals"));
    assertEquals(documented.getJsonArray("changed_since"), plan.getJsonArray("changed_since"));
    assertEquals(documented.getBoolean("confirmation_required"), plan.getBoolean("confirmation_required"));

    commit("undo_transaction", args, plan);
    assertEquals(List.of("1|ada|10.50", "2|ada|20.00"), rows("SELECT o.id || '|' || c.name || '|' || o.total FROM public.rs_order o"
        + " JOIN public.rs_customer c ON c.id = o.customer_id WHERE c.id = 1 ORDER BY o.id"), "the orders come back with their identity ids");
  }

  @Test
  void undoingAnUpdateAndAnInsertOfOneTransactionPutsBothBack() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB,
        "BEGIN; UPDATE public.rs_customer SET name = 'robert' WHERE id = 2;"
            + " INSERT INTO public.rs_customer (id, name) VALUES (4, 'dee'); UPDATE public.rs_customer SET name = 'deedee' WHERE id = 4;"
            + " COMMIT"));
    String transaction = only(changes, "rs_customer", "INSERT").getString("transaction");
    JsonObject args = new JsonObject().put("transaction", transaction);
    JsonObject plan = ok("undo_transaction", args);
    assertEquals(new JsonObject().put("inserted", 0).put("updated", 1).put("deleted", 1), plan.getJsonObject("totals"), plan::encode);
    error("undo_transaction", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()),
        "DECISION_REQUIRED");
    commit("undo_transaction", args.copy().put("confirm", true), plan);
    assertEquals(List.of("1|ada", "2|bob"), rows("SELECT id || '|' || name FROM public.rs_customer ORDER BY id"));
  }

  @Test
  void aCommitIsRefusedWhenTheRowsMovedOnSinceThePlan() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "UPDATE public.rs_customer SET name = 'x' WHERE id = 2"));
    JsonObject args = new JsonObject().put("transaction", only(changes, "rs_customer", "UPDATE").getString("transaction"));
    JsonObject plan = ok("undo_transaction", args);
    assertEquals(new JsonArray(), plan.getJsonArray("changed_since"));
    sql(infra, DB, "UPDATE public.rs_customer SET name = 'y' WHERE id = 2");
    error("undo_transaction", args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", UUID.randomUUID().toString()),
        "PLAN_CHANGED");
    assertEquals(List.of("y"), rows("SELECT name FROM public.rs_customer WHERE id = 2"));
  }

  // ---- bad input ----

  @Test
  void badInputIsRefusedWithItsOwnCodeAndChangesNothing() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "UPDATE public.rs_customer SET name = 'z' WHERE id = 2",
        "UPDATE public.rs_note SET body = 'other'", "TRUNCATE public.rs_order"));
    String position = only(changes, "rs_customer", "UPDATE").getString("position");

    JsonObject view = error("restore_rows", new JsonObject().put("table", "rs_view").put("key", 2).put("before", position),
        "INVALID_ARGUMENTS");
    assertEquals("not_captured", view.getString("reason"), view::encode);
    error("restore_rows", new JsonObject().put("table", "rs_customer").put("key", 2).put("before", "forged"), "INVALID_CURSOR");
    error("restore_rows", new JsonObject().put("table", "rs_customer").put("key", new JsonArray().add(1).add(2)).put("before", position),
        "INVALID_ARGUMENTS");
    error("restore_rows", new JsonObject().put("table", "rs_customer").put("key", "not a number").put("before", position),
        "INVALID_ARGUMENTS");
    error("restore_rows", new JsonObject().put("table", "rs_customer").put("key", 99).put("before", position), "NOT_FOUND");
    // a table the caller may read only some columns of: its rows would come back with values it may not see
    JsonObject partial = error("undo_transaction", new JsonObject()
        .put("transaction", only(changes, "rs_note", "UPDATE").getString("transaction")), "PERMISSION_DENIED");
    assertTrue(partial.getString("message").contains("SELECT on the whole table"), partial::encode);
    error("undo_transaction", new JsonObject().put("transaction", "12; DROP TABLE x"), "INVALID_ARGUMENTS");
    error("undo_transaction", new JsonObject().put("transaction", "1"), "NOT_FOUND");
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.rs_gone (id int PRIMARY KEY)");
    List<JsonObject> withDdl = changesOf(() -> sql(infra, DB,
        "BEGIN; UPDATE public.rs_customer SET name = 'zz' WHERE id = 2; DROP TABLE public.rs_gone; COMMIT"));
    JsonObject ddl = error("undo_transaction", new JsonObject().put("transaction", only(withDdl, "rs_customer", "UPDATE")
        .getString("transaction")), "INVALID_ARGUMENTS");
    assertEquals("DDL", ddl.getString("op"), ddl::encode);
    sql(infra, DB, "UPDATE public.rs_customer SET name = 'z' WHERE id = 2");
    JsonObject truncated = error("undo_transaction", new JsonObject()
        .put("transaction", only(changes, "rs_order", "TRUNCATE").getString("transaction")), "INVALID_ARGUMENTS");
    assertEquals("TRUNCATE", truncated.getString("op"), truncated::encode);

    sql(infra, DB, "UPDATE tidemark.changelog_state SET pruned_commit = (SELECT max(position) + 1 FROM tidemark.changelog_commit)");
    error("restore_rows", new JsonObject().put("table", "rs_customer").put("key", 2).put("before", position), "CURSOR_EXPIRED");
    assertEquals(List.of("z"), rows("SELECT name FROM public.rs_customer WHERE id = 2"));
    assertEquals(List.of("0"), rows("SELECT count(*) FROM public.rs_order"));
  }

  // ---- a table of database.key-only-tables ----

  @Test
  void whatAKeyOnlyTableUpdatedOrDeletedIsRefusedAsMissingItsBeforeImageAndItsInsertsAreUndone() {
    List<JsonObject> changes = changesOf(() -> sql(infra, DB, "UPDATE public.rs_keyed SET body = 'uno' WHERE id = 1",
        "DELETE FROM public.rs_keyed WHERE id = 2", "INSERT INTO public.rs_keyed VALUES (4, 'four')"));
    JsonObject update = only(changes, "rs_keyed", "UPDATE");
    JsonObject delete = only(changes, "rs_keyed", "DELETE");
    for (JsonObject change : List.of(update, delete)) {
      JsonObject refused = error("restore_rows", new JsonObject().put("table", "rs_keyed").put("key", change.getJsonArray("key").getValue(0))
          .put("before", change.getString("position")), "BEFORE_IMAGE_MISSING");
      assertEquals("public.rs_keyed", refused.getString("table"), refused::encode);
      assertTrue(refused.getString("message").contains("database.key-only-tables")
          && refused.getString("message").contains("Nothing was written"), refused::encode);
      JsonObject undo = error("undo_transaction", new JsonObject().put("transaction", change.getString("transaction")),
          "BEFORE_IMAGE_MISSING");
      assertTrue(undo.getString("message").contains("undo_transaction cannot put it back"), undo::encode);
    }
    assertEquals(List.of("1|uno", "3|three", "4|four"), rows("SELECT id || '|' || body FROM public.rs_keyed ORDER BY id"));

    // an insert needs no old row: undoing it deletes the row
    JsonObject insert = only(changes, "rs_keyed", "INSERT");
    JsonObject args = new JsonObject().put("transaction", insert.getString("transaction"));
    commit("undo_transaction", args.copy().put("confirm", true), ok("undo_transaction", args));
    assertEquals(List.of("1|uno", "3|three"), rows("SELECT id || '|' || body FROM public.rs_keyed ORDER BY id"));
  }
}
