package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * get_row and list_rows reuse a table's shape, and query the parameter types of a statement, yet a
 * change to the table made with plain SQL is seen by the very next call. The role keeps shapes for ten minutes and runs no changelog role, so
 * neither expiry nor a schema change notice helps: only the per-call checks and the second look-up
 * after a statement that no longer fits can make these pass.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CatalogCacheIT {

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
        harness = QueryRole.start(infra, Map.of(ConfigKey.DATABASE_CATALOG_CACHE_MS, "600000"));
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private void sql(String... statements) throws Exception {
    try (Connection conn = ServiceHarness.jdbc(infra)) {
      for (String s : statements) {
        conn.createStatement().execute(s);
      }
    }
  }

  private JsonObject row(String table, Object key) {
    return harness.ok(ServiceHarness.READER, "get_row", new JsonObject().put("table", table).put("key", key)).getJsonObject("row");
  }

  /** Each call twice, so that the shape is cached and the statement prepared on more than one connection. */
  private JsonObject rowTwice(String table, Object key) {
    row(table, key);
    return row(table, key);
  }

  @Test
  void aColumnWhoseTypeChangedIsReadWithItsNewTypeAtOnce() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_type",
        "CREATE TABLE public.it_cc_type (id int PRIMARY KEY, v int)",
        "INSERT INTO public.it_cc_type VALUES (1, 7)",
        "GRANT SELECT ON public.it_cc_type TO tidemark_reader");
    assertEquals(7, rowTwice("it_cc_type", 1).getInteger("v"));
    sql("ALTER TABLE public.it_cc_type ALTER COLUMN v TYPE text USING 'seven'");
    assertEquals("seven", rowTwice("it_cc_type", 1).getString("v"));
  }

  @Test
  void aTableDroppedAndCreatedAgainIsReadByItsNewKeyAtOnce() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_again",
        "CREATE TABLE public.it_cc_again (id int PRIMARY KEY, n int)",
        "INSERT INTO public.it_cc_again VALUES (1, 10)",
        "GRANT SELECT ON public.it_cc_again TO tidemark_reader");
    assertEquals(10, rowTwice("it_cc_again", 1).getInteger("n"));
    sql("DROP TABLE public.it_cc_again",
        "CREATE TABLE public.it_cc_again (code text PRIMARY KEY, n int)",
        "INSERT INTO public.it_cc_again VALUES ('a', 20)",
        "GRANT SELECT ON public.it_cc_again TO tidemark_reader");
    JsonObject again = rowTwice("it_cc_again", "a");
    assertEquals("a", again.getString("code"));
    assertEquals(20, again.getInteger("n"));
    assertFalse(again.containsKey("id"));
  }

  @Test
  void aTableReplacedByAViewOfTheSameNameIsAnsweredAsTheViewAtOnce() throws Exception {
    sql("DROP VIEW IF EXISTS public.it_cc_swap", "DROP TABLE IF EXISTS public.it_cc_swap, public.it_cc_swap_base",
        "CREATE TABLE public.it_cc_swap (id int PRIMARY KEY, v text)",
        "INSERT INTO public.it_cc_swap VALUES (1, 'the table')",
        "GRANT SELECT ON public.it_cc_swap TO tidemark_reader");
    assertEquals("the table", rowTwice("it_cc_swap", 1).getString("v"));
    sql("DROP TABLE public.it_cc_swap",
        "CREATE TABLE public.it_cc_swap_base (id int PRIMARY KEY, v text)",
        "INSERT INTO public.it_cc_swap_base VALUES (1, 'the view')",
        "CREATE VIEW public.it_cc_swap AS SELECT id, v FROM public.it_cc_swap_base",
        "GRANT SELECT ON public.it_cc_swap, public.it_cc_swap_base TO tidemark_reader");
    // the cached shape (a table with a key) is not used to read the view: a view has no primary key
    JsonObject refused = harness.error(ServiceHarness.READER, "get_row", new JsonObject().put("table", "it_cc_swap").put("key", 1), "INVALID_ARGUMENTS");
    assertTrue(refused.getString("message").contains("no primary key"), refused.encode());
    JsonObject listed = harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_cc_swap"));
    assertEquals("the view", listed.getJsonArray("rows").getJsonObject(0).getString("v"));
  }

  @Test
  void aTableThatGainsAPolicyAfterItsShapeWasCachedIsReadUnderThePolicyAtOnce() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_policy",
        "CREATE TABLE public.it_cc_policy (id int PRIMARY KEY, v text)",
        "INSERT INTO public.it_cc_policy VALUES (1, 'hidden later'), (2, 'always shown')",
        "GRANT SELECT ON public.it_cc_policy TO tidemark_reader");
    assertEquals("hidden later", rowTwice("it_cc_policy", 1).getString("v"));
    harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_cc_policy"));
    sql("ALTER TABLE public.it_cc_policy ENABLE ROW LEVEL SECURITY",
        "CREATE POLICY it_cc_only_two ON public.it_cc_policy FOR SELECT USING (id = 2)");
    JsonObject gone = harness.error(ServiceHarness.READER, "get_row", new JsonObject().put("table", "it_cc_policy").put("key", 1), "NOT_FOUND");
    assertEquals("key", gone.getString("argument"), "the row is hidden by the policy, not the table: " + gone.encode());
    assertEquals("always shown", rowTwice("it_cc_policy", 2).getString("v"));
    JsonObject listed = harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_cc_policy"));
    assertEquals(1, listed.getJsonArray("rows").size(), listed.encode());
    assertEquals(2, listed.getJsonArray("rows").getJsonObject(0).getInteger("id"));
  }

  @Test
  void aTableWhoseReadRightWasRevokedIsNotFoundAtOnceAndReadableOnceGrantedAgain() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_revoke",
        "CREATE TABLE public.it_cc_revoke (id int PRIMARY KEY)",
        "INSERT INTO public.it_cc_revoke VALUES (1)",
        "GRANT SELECT ON public.it_cc_revoke TO tidemark_reader");
    assertEquals(1, rowTwice("it_cc_revoke", 1).getInteger("id"));
    sql("REVOKE SELECT ON public.it_cc_revoke FROM tidemark_reader");
    JsonObject refused = harness.error(ServiceHarness.READER, "get_row", new JsonObject().put("table", "it_cc_revoke").put("key", 1), "NOT_FOUND");
    assertEquals("table", refused.getString("argument"));
    harness.error(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_cc_revoke"), "NOT_FOUND");
    sql("GRANT SELECT ON public.it_cc_revoke TO tidemark_reader");
    assertEquals(1, row("it_cc_revoke", 1).getInteger("id"));
  }

  @Test
  void aColumnAddedCanBeFilteredOnAtOnceAndADroppedOneIsGoneAtOnce() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_columns",
        "CREATE TABLE public.it_cc_columns (id int PRIMARY KEY, old text)",
        "INSERT INTO public.it_cc_columns VALUES (1, 'x'), (2, 'y')",
        "GRANT SELECT ON public.it_cc_columns TO tidemark_reader");
    JsonObject all = new JsonObject().put("table", "it_cc_columns");
    harness.ok(ServiceHarness.READER, "list_rows", all);
    assertEquals(2, harness.ok(ServiceHarness.READER, "list_rows", all).getJsonArray("rows").size());

    sql("ALTER TABLE public.it_cc_columns ADD COLUMN added int", "UPDATE public.it_cc_columns SET added = id * 100");
    JsonObject filtered = harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_cc_columns")
        .put("where", new JsonObject().put("column", "added").put("op", "eq").put("value", 200)));
    JsonArray rows = filtered.getJsonArray("rows");
    assertEquals(1, rows.size(), filtered::encode);
    assertEquals(2, rows.getJsonObject(0).getInteger("id"));

    sql("ALTER TABLE public.it_cc_columns DROP COLUMN old");
    JsonObject after = harness.ok(ServiceHarness.READER, "list_rows", all);
    assertEquals(new JsonArray().add("id").add("added"), after.getJsonArray("columns"));
    assertTrue(after.getJsonArray("rows").stream().map(JsonObject.class::cast).noneMatch(r -> r.containsKey("old")));
  }

  @Test
  void aQueryParameterWhoseColumnChangedTypeIsBoundToTheNewTypeAtOnce() throws Exception {
    sql("DROP TABLE IF EXISTS public.it_cc_param",
        "CREATE TABLE public.it_cc_param (id int PRIMARY KEY, code int)",
        "INSERT INTO public.it_cc_param VALUES (1, 5)",
        "GRANT SELECT ON public.it_cc_param TO tidemark_reader");
    String statement = "SELECT id FROM public.it_cc_param WHERE code = $1";
    JsonObject byNumber = new JsonObject().put("sql", statement).put("params", new JsonArray().add(5));
    harness.ok(ServiceHarness.READER, "query", byNumber);
    assertEquals(1, harness.ok(ServiceHarness.READER, "query", byNumber).getJsonArray("rows").size(), "the types are remembered by now");
    sql("ALTER TABLE public.it_cc_param ALTER COLUMN code TYPE text USING 'five'");
    JsonObject rows = harness.ok(ServiceHarness.READER, "query", new JsonObject().put("sql", statement).put("params", new JsonArray().add("five")));
    assertEquals(1, rows.getJsonArray("rows").size(), rows::encode);
    assertEquals(1, rows.getJsonArray("rows").getJsonObject(0).getInteger("id"));
  }
}
