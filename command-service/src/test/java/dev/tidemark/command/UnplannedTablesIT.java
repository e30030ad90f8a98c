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
 * database.unplanned-tables, with the command, query and changelog roles against a real PostgreSQL
 * and Kafka: the named tables carry no plan trigger, and a change tool's change that writes their
 * rows (itself, through a foreign key's cascade, or through an application's trigger) is refused with TABLE_UNPLANNED before anything is written, while the other tables plan and
 * commit as before and the named tables' own writers are still captured.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UnplannedTablesIT {

  static final String DB = "unplanned_it";

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB,
        "DROP TABLE IF EXISTS public.up_child, public.up_parent, public.up_item, public.up_log CASCADE",
        "CREATE TABLE public.up_parent (id int PRIMARY KEY, name text NOT NULL)",
        "CREATE TABLE public.up_child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES public.up_parent ON DELETE CASCADE)",
        "CREATE TABLE public.up_log (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, note text NOT NULL)",
        "CREATE TABLE public.up_item (id int PRIMARY KEY, name text NOT NULL)",
        // an application's trigger that writes a row of an unplanned table for each new item
        "CREATE OR REPLACE FUNCTION public.up_item_logged() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$"
            + " BEGIN INSERT INTO public.up_log (note) VALUES ('item ' || NEW.id); RETURN NULL; END $$",
        "CREATE TRIGGER up_item_logged AFTER INSERT ON public.up_item FOR EACH ROW EXECUTE FUNCTION public.up_item_logged()",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.up_parent, public.up_child, public.up_item TO tidemark_writer",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.up_log TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'], '{}', ARRAY['up_child', 'public.up_log'])");
    // the application's trigger function is reviewed, so that the function check lets a change of up_item run it
    harness = CommandRole.withQuery(infra, DB, Map.of(ConfigKey.DATABASE_UNPLANNED_TABLES, "up_child,public.up_log",
        ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.up_item_logged"));
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(harness);
  }

  @BeforeEach
  void seed() {
    sql(infra, DB,
        "TRUNCATE public.up_parent, public.up_child, public.up_item, public.up_log RESTART IDENTITY CASCADE",
        "INSERT INTO public.up_parent VALUES (1, 'with a child'), (2, 'alone')",
        "INSERT INTO public.up_child VALUES (10, 1)",
        "INSERT INTO public.up_log (note) VALUES ('first')");
  }

  private JsonObject ok(String tool, JsonObject args) {
    return harness.ok(ServiceHarness.WRITER, tool, args);
  }

  private JsonObject refused(String tool, JsonObject args, String table) {
    JsonObject e = harness.error(ServiceHarness.WRITER, tool, args, "TABLE_UNPLANNED");
    assertTrue(e.getString("message").contains(table) && e.getString("message").contains("database.unplanned-tables")
        && e.getString("message").contains("Nothing was written"), e::encode);
    assertEquals(false, e.getBoolean("retriable"), e::encode);
    return e;
  }

  private List<String> rows(String query) {
    return TestDatabases.strings(infra, DB, query);
  }

  private List<String> everything() {
    return rows("SELECT 'parent ' || id FROM public.up_parent UNION ALL SELECT 'child ' || id FROM public.up_child"
        + " UNION ALL SELECT 'item ' || id FROM public.up_item UNION ALL SELECT 'log ' || note FROM public.up_log ORDER BY 1");
  }

  @Test
  void theNamedTablesCarryNoPlanTriggerAndStatusNamesThem() {
    assertEquals(List.of("up_item 2", "up_parent 2"), rows("SELECT c.relname || ' ' || count(t.oid) FROM pg_class c"
        + " LEFT JOIN pg_trigger t ON t.tgrelid = c.oid AND t.tgname LIKE 'tidemark_capture%'"
        + " WHERE c.relname IN ('up_parent', 'up_child', 'up_log', 'up_item') GROUP BY c.relname HAVING count(t.oid) > 0 ORDER BY 1"));
    assertEquals(List.of("public.up_child", "public.up_log"),
        ok("status", new JsonObject()).getJsonArray("unplanned_tables").getList());
  }

  @Test
  void aChangeOfAnUnplannedTableItselfIsRefusedAndWritesNothing() {
    List<String> before = everything();
    refused("insert_rows", new JsonObject().put("table", "up_log")
        .put("rows", new JsonArray().add(new JsonObject().put("note", "by a change tool"))), "public.up_log");
    refused("execute", new JsonObject().put("sql", "UPDATE public.up_log SET note = 'changed'"), "public.up_log");
    refused("execute", new JsonObject().put("sql", "DELETE FROM public.up_log"), "public.up_log");
    assertEquals(before, everything());
  }

  @Test
  void aCascadeOrAnApplicationsTriggerIntoAnUnplannedTableIsRefusedAndWritesNothing() {
    List<String> before = everything();
    refused("delete_rows", new JsonObject().put("table", "up_parent").put("key", 1), "public.up_child");
    refused("insert_rows", new JsonObject().put("table", "up_item")
        .put("rows", new JsonArray().add(new JsonObject().put("id", 1).put("name", "logged"))), "public.up_log");
    assertEquals(before, everything());
  }

  @Test
  void otherTablesPlanAndCommitAsBeforeOnTheConnectionsThatRefused() {
    // the refusals first, so that the pooled connections carry PostgreSQL's counts of the rolled-back rows
    for (int i = 0; i < 3; i++) {
      refused("execute", new JsonObject().put("sql", "INSERT INTO public.up_log (note) VALUES ('again')"), "public.up_log");
    }
    for (int i = 0; i < 3; i++) {
      JsonObject args = new JsonObject().put("table", "up_parent").put("key", 2).put("set", new JsonObject().put("name", "renamed " + i));
      JsonObject plan = ok("update_rows", args);
      assertEquals(1, ServiceHarness.ofTable(plan, "changes", "public.up_parent").getInteger("updated"), plan::encode);
      JsonObject committed = ok("update_rows", args.copy().put("plan_id", plan.getString("plan_id"))
          .put("idempotency_key", UUID.randomUUID().toString()));
      assertEquals("commit", committed.getString("mode"));
      assertEquals(List.of("renamed " + i), rows("SELECT name FROM public.up_parent WHERE id = 2"));
    }
  }

  @Test
  void theUnplannedTablesOwnWritersAreStillCaptured() {
    sql(infra, DB, "INSERT INTO public.up_log (note) VALUES ('by the application')", "DELETE FROM public.up_parent WHERE id = 1");
    TestDatabases.awaitDecoded(infra, DB);
    assertEquals(List.of("up_child DELETE", "up_log INSERT", "up_parent DELETE"), rows("SELECT DISTINCT table_name || ' ' || op"
        + " FROM tidemark.changelog WHERE xid IN (SELECT xid FROM tidemark.changelog WHERE table_name = 'up_log'"
        + " AND after->>'note' = 'by the application' UNION SELECT xid FROM tidemark.changelog WHERE table_name = 'up_parent'"
        + " AND op = 'DELETE') ORDER BY 1"));
  }
}
