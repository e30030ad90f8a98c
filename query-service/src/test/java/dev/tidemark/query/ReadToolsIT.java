package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolReply;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** describe_table, get_row, list_rows, query and explain against the demo database, called over the event bus as a gateway calls them. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReadToolsIT {

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra);
    try (Connection conn = jdbc()) {
      conn.createStatement().execute("CREATE TABLE IF NOT EXISTS public.it_no_key (a int, b text)");
      conn.createStatement().execute("TRUNCATE public.it_no_key");
      conn.createStatement().execute("INSERT INTO public.it_no_key SELECT g, 'row ' || g FROM generate_series(1, 5) g");
      conn.createStatement().execute("GRANT SELECT ON public.it_no_key TO tidemark_reader, tidemark_writer");
    }
    harness = QueryRole.start(infra, Map.of());
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private Connection jdbc() throws Exception {
    return ServiceHarness.jdbc(infra);
  }

  private JsonObject ok(String tool, JsonObject args) {
    return harness.ok(ServiceHarness.READER, tool, args);
  }

  private JsonObject error(String tool, JsonObject args, String code) {
    return harness.error(ServiceHarness.READER, tool, args, code);
  }

  // ---- describe_table ----

  @Test
  void describeTableShowsColumnsKeysForeignKeysBothWaysIndexesAndChecks() {
    JsonObject orders = ok("describe_table", new JsonObject().put("table", "orders"));
    assertEquals("public", orders.getString("schema"));
    assertEquals(new JsonArray().add("id"), orders.getJsonArray("primary_key"));
    JsonObject total = orders.getJsonArray("columns").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("name").equals("total")).findFirst().orElseThrow();
    assertEquals("numeric(14,2)", total.getString("type"));
    assertEquals(false, total.getBoolean("nullable"));
    assertEquals("0", total.getString("default"));
    JsonObject fk = orders.getJsonArray("foreign_keys").getJsonObject(0);
    assertEquals("customers", fk.getJsonObject("references").getString("table"));
    assertEquals("cascade", fk.getString("on_delete"));
    List<String> referencing = orders.getJsonArray("referenced_by").stream().map(o -> ((JsonObject) o).getString("table")).toList();
    assertTrue(referencing.containsAll(List.of("order_items", "support_tickets")), referencing.toString());
    assertTrue(orders.getJsonArray("indexes").stream().anyMatch(i -> ((JsonObject) i).getString("name").equals("orders_customer_idx")));
    assertEquals(false, orders.getBoolean("row_level_security"));

    JsonObject products = ok("describe_table", new JsonObject().put("table", "public.products"));
    assertTrue(products.getJsonArray("checks").getJsonObject(0).getString("definition").contains("price >="));
    JsonObject customers = ok("describe_table", new JsonObject().put("table", "customers"));
    assertEquals("Free text written by support staff.", customers.getJsonArray("columns").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("name").equals("notes")).findFirst().orElseThrow().getString("comment"));
    JsonObject index = orders.getJsonArray("indexes").stream().map(JsonObject.class::cast)
        .filter(i -> i.getString("name").equals("orders_customer_idx")).findFirst().orElseThrow();
    assertTrue(index.getString("definition").startsWith("btree ("), index.encode());
    assertTrue(orders.getJsonArray("indexes").stream().noneMatch(i -> ((JsonObject) i).getBoolean("primary")),
        "the primary key's index only repeats primary_key");
  }

  @Test
  void describeTableDescribesSeveralTablesShowingEachForeignKeyBetweenThemOnce() {
    JsonObject both = ok("describe_table", new JsonObject().put("tables", new JsonArray().add("orders").add("public.customers")));
    List<JsonObject> tables = both.getJsonArray("tables").stream().map(JsonObject.class::cast).toList();
    assertEquals(List.of("orders", "customers"), tables.stream().map(t -> t.getString("name")).toList(), "in the order asked");
    assertEquals("customers", tables.get(0).getJsonArray("foreign_keys").getJsonObject(0).getJsonObject("references").getString("table"));
    List<String> referencing = tables.get(1).getJsonArray("referenced_by").stream().map(o -> ((JsonObject) o).getString("table")).toList();
    assertFalse(referencing.contains("orders"), "shown in foreign_keys of orders, not again: " + referencing);
    assertTrue(referencing.contains("support_tickets"), referencing.toString());

    JsonObject missing = error("describe_table", new JsonObject().put("tables", new JsonArray().add("orders").add("nope")), "NOT_FOUND");
    assertEquals("tables/1", missing.getString("argument"));
    error("describe_table", new JsonObject().put("table", "orders").put("tables", new JsonArray().add("orders")), "INVALID_ARGUMENTS");
    error("describe_table", new JsonObject(), "INVALID_ARGUMENTS");
  }

  @Test
  void anUnknownTableAndTidemarksOwnTablesAreNotFound() {
    assertEquals("table", error("describe_table", new JsonObject().put("table", "no_such_table"), "NOT_FOUND").getString("argument"));
    error("describe_table", new JsonObject().put("table", "tidemark.api_token"), "NOT_FOUND");
    error("get_row", new JsonObject().put("table", "tidemark.api_token").put("key", 1), "NOT_FOUND");
    error("list_rows", new JsonObject().put("table", "tidemark.api_token"), "NOT_FOUND");
    error("list_rows", new JsonObject().put("table", "api_token"), "NOT_FOUND");
    dev.tidemark.contract.ToolReply q = harness.call(ServiceHarness.READER, "query", new JsonObject().put("sql", "SELECT * FROM tidemark.api_token"));
    String code = q.error().getString("code");
    assertTrue(code.equals("NOT_FOUND") || code.equals("PERMISSION_DENIED"), code);
    assertFalse(q.toJson().encode().contains("token_hash"));
  }

  // ---- get_row ----

  @Test
  void getRowReadsOneRowBySingleAndCompositeKey() {
    JsonObject c = ok("get_row", new JsonObject().put("table", "customers").put("key", 7));
    assertEquals(7, c.getJsonObject("row").getInteger("id"));
    assertEquals("customer7@example.com", c.getJsonObject("row").getString("email"));
    JsonObject byString = ok("get_row", new JsonObject().put("table", "customers").put("key", "7"));
    assertEquals(c.getJsonObject("row"), byString.getJsonObject("row"));
    JsonObject item = ok("get_row", new JsonObject().put("table", "order_items").put("key", new JsonArray().add(2).add(1)));
    assertEquals(new JsonArray().add("order_id").add("line_no"), item.getJsonArray("primary_key"));
    assertEquals(2, item.getJsonObject("row").getInteger("order_id"));
    assertTrue(item.getJsonObject("row").getValue("unit_price") instanceof String, "numeric is a string");
  }

  @Test
  void getRowRefusesAWrongKeyAMissingRowAndATableWithoutPrimaryKey() {
    assertEquals("key", error("get_row", new JsonObject().put("table", "order_items").put("key", 2), "INVALID_ARGUMENTS").getString("argument"));
    assertEquals("key", error("get_row", new JsonObject().put("table", "customers").put("key", "abc"), "INVALID_ARGUMENTS").getString("argument"));
    assertEquals("key", error("get_row", new JsonObject().put("table", "customers").put("key", 999999), "NOT_FOUND").getString("argument"));
    JsonObject noKey = error("get_row", new JsonObject().put("table", "it_no_key").put("key", 1), "INVALID_ARGUMENTS");
    assertTrue(noKey.getString("message").contains("no primary key"), noKey.getString("message"));
  }

  // ---- list_rows ----

  @Test
  void listRowsCompilesEveryFilterOperatorToParameterisedSql() {
    JsonObject where = new JsonObject().put("and", new JsonArray()
        .add(cond("status", "in", new JsonArray().add("paid").add("shipped")))
        .add(cond("total", "gte", "100.00"))
        .add(new JsonObject().put("not", cond("customer_id", "eq", 38)))
        .add(new JsonObject().put("or", new JsonArray()
            .add(cond("shipping_address", "is_null", false))
            .add(cond("id", "lt", 0)))));
    JsonObject page = ok("list_rows", new JsonObject().put("table", "orders").put("where", where).put("order", new JsonArray().add("-total")).put("limit", 50));
    JsonArray rows = page.getJsonArray("rows");
    assertFalse(rows.isEmpty());
    double previous = Double.MAX_VALUE;
    for (Object o : rows) {
      JsonObject r = (JsonObject) o;
      assertTrue(Set.of("paid", "shipped").contains(r.getString("status")));
      double total = Double.parseDouble(r.getString("total"));
      assertTrue(total >= 100 && total <= previous, r.encode());
      assertNotEquals(38, r.getInteger("customer_id"));
      previous = total;
    }
    JsonObject like = ok("list_rows", new JsonObject().put("table", "customers").put("columns", new JsonArray().add("id").add("email"))
        .put("where", new JsonObject().put("or", new JsonArray().add(cond("email", "like", "customer1_@example.com")).add(cond("name", "ilike", "CUSTOMER 5")))));
    assertEquals(11, like.getJsonArray("rows").size(), like.encode());
    assertEquals(new JsonArray().add("id").add("email"), like.getJsonArray("columns"));
    assertEquals(Set.of("id", "email"), like.getJsonArray("rows").getJsonObject(0).fieldNames());
    JsonObject ne = ok("list_rows", new JsonObject().put("table", "customers").put("where", cond("notes", "ne", "x")).put("limit", 1));
    assertEquals(1, ne.getJsonArray("rows").size(), "ne counts NULL as different");
    JsonObject injection = ok("list_rows", new JsonObject().put("table", "customers").put("where", cond("name", "eq", "x' OR '1'='1")));
    assertEquals(0, injection.getJsonArray("rows").size(), "a value never becomes SQL");
  }

  @Test
  void listRowsNamesAnUnknownColumnAndABadValue() {
    JsonObject unknown = error("list_rows", new JsonObject().put("table", "orders").put("where", cond("no_such_col", "eq", 1)), "INVALID_ARGUMENTS");
    assertEquals("where", unknown.getString("argument"));
    assertEquals("no_such_col", unknown.getString("column"));
    assertEquals("order", error("list_rows", new JsonObject().put("table", "orders").put("order", new JsonArray().add("-nope")), "INVALID_ARGUMENTS").getString("argument"));
    assertEquals("columns", error("list_rows", new JsonObject().put("table", "orders").put("columns", new JsonArray().add("nope")), "INVALID_ARGUMENTS").getString("argument"));
    assertEquals("where", error("list_rows", new JsonObject().put("table", "orders").put("where", cond("id", "eq", "abc")), "INVALID_ARGUMENTS").getString("argument"));
    JsonObject between = error("list_rows", new JsonObject().put("table", "orders")
        .put("where", new JsonObject().put("and", new JsonArray().add(new JsonObject().put("column", "id").put("op", "between")))), "INVALID_ARGUMENTS");
    assertEquals("/where/and/0/op", between.getJsonArray("faults").getJsonObject(0).getString("pointer"), between.encode());
    JsonObject twoForms = error("list_rows", new JsonObject().put("table", "orders")
        .put("where", cond("id", "eq", 1).put("and", new JsonArray().add(cond("id", "eq", 2)))), "INVALID_ARGUMENTS");
    assertEquals("where", twoForms.getString("argument"));
  }

  @Test
  void listRowsKeysetPagesCoverEveryRowOnceInOrderWithNullsAndDescendingKeys() {
    Set<Long> seen = new HashSet<>();
    List<String> closed = new ArrayList<>();
    JsonObject args = new JsonObject().put("table", "support_tickets").put("order", new JsonArray().add("-closed_at"))
        .put("columns", new JsonArray().add("id").add("closed_at")).put("limit", 70);
    String cursor = null;
    int pages = 0;
    do {
      JsonObject a = args.copy();
      if (cursor != null) {
        a.put("cursor", cursor);
      }
      JsonObject page = ok("list_rows", a);
      assertEquals("keyset", page.getString("paging"));
      for (Object o : page.getJsonArray("rows")) {
        JsonObject r = (JsonObject) o;
        assertTrue(seen.add(r.getLong("id")), "row seen twice: " + r.encode());
        closed.add(r.getString("closed_at"));
      }
      cursor = page.getString("next_cursor");
      pages++;
    } while (cursor != null);
    assertEquals(300, seen.size());
    assertEquals(5, pages);
    assertNull(closed.get(0), "descending puts NULLs first");
    List<String> nonNull = closed.stream().filter(c -> c != null).toList();
    List<String> sorted = new ArrayList<>(nonNull);
    sorted.sort(java.util.Comparator.reverseOrder());
    assertEquals(sorted, nonNull);
  }

  @Test
  void listRowsCursorIsSignedAndBelongsToItsArguments() {
    JsonObject args = new JsonObject().put("table", "customers").put("limit", 10);
    String cursor = ok("list_rows", args).getString("next_cursor");
    JsonObject second = ok("list_rows", args.copy().put("cursor", cursor));
    assertEquals(11, second.getJsonArray("rows").getJsonObject(0).getInteger("id"));
    error("list_rows", new JsonObject().put("table", "orders").put("limit", 10).put("cursor", cursor), "INVALID_CURSOR");
    byte[] raw = java.util.Base64.getUrlDecoder().decode(cursor);
    assertFalse(new String(raw, java.nio.charset.StandardCharsets.ISO_8859_1).contains("\"k\""), "the payload is sealed, not readable");
    raw[raw.length / 2] ^= 1;
    String forged = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
    error("list_rows", args.copy().put("cursor", forged), "INVALID_CURSOR");
    error("list_rows", args.copy().put("cursor", "not-a-cursor"), "INVALID_CURSOR");
    error("query", new JsonObject().put("sql", "SELECT 1").put("cursor", cursor), "INVALID_CURSOR");
  }

  @Test
  void listRowsOnATableWithoutPrimaryKeyPagesByOffsetAndSaysSo() {
    JsonObject args = new JsonObject().put("table", "it_no_key").put("order", new JsonArray().add("a")).put("limit", 2);
    JsonObject first = ok("list_rows", args);
    assertEquals("offset", first.getString("paging"));
    JsonObject second = ok("list_rows", args.copy().put("cursor", first.getString("next_cursor")));
    assertEquals(3, second.getJsonArray("rows").getJsonObject(0).getInteger("a"));
    JsonObject third = ok("list_rows", args.copy().put("cursor", second.getString("next_cursor")));
    assertEquals(1, third.getJsonArray("rows").size());
    assertNull(third.getString("next_cursor"));
  }

  // ---- query ----

  @Test
  void queryPagesWithACursorThatBelongsToItsStatementAndParams() {
    JsonObject args = new JsonObject().put("sql", "SELECT id, name FROM customers WHERE id <= $1 ORDER BY id")
        .put("params", new JsonArray().add(25)).put("limit", 10);
    JsonObject first = ok("query", args);
    assertEquals(10, first.getJsonArray("rows").size());
    assertEquals(new JsonObject().put("name", "id").put("type", "int8"), first.getJsonArray("columns").getJsonObject(0));
    JsonObject second = ok("query", args.copy().put("cursor", first.getString("next_cursor")));
    assertEquals(11, second.getJsonArray("rows").getJsonObject(0).getInteger("id"));
    JsonObject third = ok("query", args.copy().put("cursor", second.getString("next_cursor")));
    assertEquals(5, third.getJsonArray("rows").size());
    assertNull(third.getString("next_cursor"), "no next_cursor on the last page");
    error("query", args.copy().put("params", new JsonArray().add(26)).put("cursor", first.getString("next_cursor")), "INVALID_CURSOR");
    error("query", args.copy().put("sql", "SELECT id FROM customers WHERE id <= $1").put("cursor", first.getString("next_cursor")), "INVALID_CURSOR");
    JsonObject defaults = ok("query", new JsonObject().put("sql", "SELECT g FROM generate_series(1, 500) g"));
    assertEquals(200, defaults.getJsonArray("rows").size());
  }

  @Test
  void queryNamesTheTypesTheClientCannotNameAsPostgreSQLDoes() {
    JsonObject args = new JsonObject().put("sql", "SELECT id, status, ARRAY[status] AS history, ARRAY[id] AS ids FROM orders WHERE id = $1")
        .put("params", new JsonArray().add(1));
    for (String round : List.of("looked up", "remembered")) {
      ToolReply reply = harness.call(ServiceHarness.READER, "query", args);
      assertFalse(reply.isError(), reply.toJson().encode());
      assertEquals(new JsonArray()
              .add(new JsonObject().put("name", "id").put("type", "int8"))
              .add(new JsonObject().put("name", "status").put("type", "order_status"))
              .add(new JsonObject().put("name", "history").put("type", "order_status[]"))
              .add(new JsonObject().put("name", "ids").put("type", "int8[]")),
          reply.structured().getJsonArray("columns"), round);
      assertTrue(reply.summary().endsWith("; columns: id int8, status order_status, history order_status[], ids int8[]"), round + ": " + reply.summary());
    }
  }

  @Test
  void queryRefusesAWrongNumberOfParamsAndNamesTheArgument() {
    assertEquals("params", error("query", new JsonObject().put("sql", "SELECT $1::int"), "INVALID_ARGUMENTS").getString("argument"));
    JsonObject bad = error("query", new JsonObject().put("sql", "SELECT $1::int").put("params", new JsonArray().add("x")), "INVALID_ARGUMENTS");
    assertEquals("/params/0", bad.getJsonArray("faults").getJsonObject(0).getString("pointer"));
    JsonObject syntax = error("query", new JsonObject().put("sql", "SELEC 1"), "INVALID_ARGUMENTS");
    assertEquals("42601", syntax.getString("sqlstate"));
    error("query", new JsonObject().put("sql", "SELECT * FROM nowhere"), "NOT_FOUND");
    assertEquals(1, ok("query", new JsonObject().put("sql", "SELECT 1 AS one")).getJsonArray("rows").size(), "the node keeps serving");
  }

  // ---- explain ----

  @Test
  void explainReturnsThePlanAsJsonAndAnalyzeRunsOnlyReads() {
    JsonObject plan = ok("explain", new JsonObject().put("sql", "SELECT * FROM orders WHERE customer_id = $1").put("params", new JsonArray().add(5)));
    assertEquals(false, plan.getBoolean("analyzed"));
    assertTrue(plan.getJsonObject("plan").containsKey("Plan"));
    assertEquals(new JsonArray().add("public.orders"), plan.getJsonArray("tables"));
    JsonObject analyzed = ok("explain", new JsonObject().put("sql", "SELECT count(*) FROM order_items").put("analyze", true));
    assertEquals(true, analyzed.getBoolean("analyzed"));
    assertTrue(analyzed.getJsonObject("plan").containsKey("Execution Time"));
    // the reader may not even plan a DELETE; the writer's refusals are in ReadOnlyGuardIT
    for (boolean analyze : new boolean[] {true, false}) {
      String code = harness.call(ServiceHarness.READER, "explain", new JsonObject().put("sql", "DELETE FROM orders").put("analyze", analyze))
          .error().getString("code");
      assertTrue(code.equals("READ_ONLY") || code.equals("PERMISSION_DENIED"), code);
    }
    assertEquals(2000, ok("query", new JsonObject().put("sql", "SELECT count(*) AS n FROM orders")).getJsonArray("rows").getJsonObject(0).getInteger("n"));
  }

  static JsonObject cond(String column, String op, Object value) {
    return new JsonObject().put("column", column).put("op", op).put("value", value);
  }
}
