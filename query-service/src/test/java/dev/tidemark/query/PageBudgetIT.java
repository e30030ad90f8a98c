package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Pages sized by bytes, called over the event bus as a gateway calls the query role: query and
 * list_rows over rows of several kilobytes, and rows too large for any page. The input schemas'
 * bounds on max_bytes and limit are the gateway's, tested in {@code RoleToolsOverMcpIT} (module
 * gateway).
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PageBudgetIT {

  private static final int DEFAULT_BUDGET = 100_000;
  private static final int ROWS = 60;

  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    ServiceHarness.prepareDatabase(infra);
    try (Connection conn = ServiceHarness.jdbc(infra)) {
      conn.createStatement().execute("DROP TABLE IF EXISTS public.it_big, public.it_huge");
      // about 9 kB of JSON a row, varied so that PostgreSQL's compression does not shrink the test
      conn.createStatement().execute("CREATE TABLE public.it_big (id int PRIMARY KEY, body text, doc jsonb, blob bytea)");
      conn.createStatement().execute("INSERT INTO public.it_big SELECT g, (SELECT string_agg(md5(g::text || ':' || i), ' ')"
          + " FROM generate_series(1, 150) i), jsonb_build_object('n', g, 'tag', md5(g::text)), decode(md5(g::text), 'hex')"
          + " FROM generate_series(1, " + ROWS + ") g");
      conn.createStatement().execute("CREATE TABLE public.it_huge (id int PRIMARY KEY, body text)");
      conn.createStatement().execute("INSERT INTO public.it_huge VALUES (1, 'small'), (2, repeat('x', 5000000)), (3, repeat('y', 200000)), (4, 'small')");
      conn.createStatement().execute("GRANT SELECT ON public.it_big, public.it_huge TO tidemark_reader, tidemark_writer");
    }
    harness = QueryRole.start(infra, Map.of());
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(harness);
  }

  private static int bytes(JsonArray rows) {
    int n = 0;
    for (Object r : rows) {
      n += ((JsonObject) r).encode().getBytes(StandardCharsets.UTF_8).length + 1;
    }
    return n;
  }

  /** Pages through {@code tool} from {@code args}; checks every page against the budget and returns the ids in order. */
  private List<Integer> pageThrough(String tool, JsonObject args, int budget, List<JsonObject> pages) {
    List<Integer> ids = new ArrayList<>();
    String cursor = null;
    do {
      JsonObject page = harness.ok(ServiceHarness.READER, tool, cursor == null ? args : args.copy().put("cursor", cursor));
      JsonArray rows = page.getJsonArray("rows");
      assertTrue(bytes(rows) <= budget, "a page of " + bytes(rows) + " bytes, over the budget of " + budget);
      assertTrue(!rows.isEmpty(), "every page carries a row");
      rows.forEach(r -> ids.add(((JsonObject) r).getInteger("id")));
      pages.add(page);
      cursor = page.getString("next_cursor");
    } while (cursor != null);
    return ids;
  }

  private static void assertEveryRowOnceAndTruncated(List<Integer> ids, List<JsonObject> pages, List<Integer> expected) {
    assertEquals(expected, ids, "every row exactly once, in order");
    assertTrue(pages.size() > 1, "the rows need more than one page");
    for (JsonObject p : pages.subList(0, pages.size() - 1)) {
      assertEquals(true, p.getBoolean("truncated"), "a page that ended on the budget says so");
    }
    assertNull(pages.get(pages.size() - 1).getValue("truncated"), "the last page is complete");
  }

  @Test
  void queryPagesLargeRowsWithinTheDefaultBudgetAndReturnsEveryRowOnce() {
    List<JsonObject> pages = new ArrayList<>();
    List<Integer> ids = pageThrough("query", new JsonObject().put("sql", "SELECT * FROM it_big ORDER BY id").put("limit", 10_000),
        DEFAULT_BUDGET, pages);
    assertEveryRowOnceAndTruncated(ids, pages, IntStream.rangeClosed(1, ROWS).boxed().toList());
  }

  @Test
  void listRowsPagesLargeRowsWithinTheDefaultBudgetAndReturnsEveryRowOnce() {
    List<JsonObject> pages = new ArrayList<>();
    List<Integer> ids = pageThrough("list_rows", new JsonObject().put("table", "it_big").put("order", new JsonArray().add("-id"))
        .put("limit", 10_000), DEFAULT_BUDGET, pages);
    assertEveryRowOnceAndTruncated(ids, pages, IntStream.rangeClosed(1, ROWS).map(i -> ROWS + 1 - i).boxed().toList());
  }

  @Test
  void maxBytesAsksForLargerPagesUpToTheMaximum() {
    Function<String, JsonObject> big = tool -> harness.ok(ServiceHarness.READER, tool, (tool.equals("query")
        ? new JsonObject().put("sql", "SELECT * FROM it_big ORDER BY id") : new JsonObject().put("table", "it_big"))
        .put("limit", 10_000).put("max_bytes", 1_000_000));
    for (String tool : List.of("query", "list_rows")) {
      JsonObject page = big.apply(tool);
      assertEquals(ROWS, page.getJsonArray("rows").size(), tool);
      assertNull(page.getValue("truncated"), tool);
      assertNull(page.getValue("next_cursor"), tool);
    }
  }

  @Test
  void aRowOverMaxBytesIsLimitExceededNamingMaxBytesAndFitsWhenMaxBytesIsRaised() {
    JsonObject q = harness.error(ServiceHarness.READER, "query", new JsonObject().put("sql", "SELECT * FROM it_huge WHERE id = 3"), "LIMIT_EXCEEDED");
    assertEquals("max_bytes", q.getString("argument"));
    assertTrue(q.getString("message").contains("pass max_bytes"), q.getString("message"));
    JsonObject l = harness.error(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_huge")
        .put("where", new JsonObject().put("column", "id").put("op", "eq").put("value", 3)), "LIMIT_EXCEEDED");
    assertEquals("max_bytes", l.getString("argument"));
    assertEquals(1, harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_huge").put("max_bytes", 300_000)
        .put("where", new JsonObject().put("column", "id").put("op", "eq").put("value", 3))).getJsonArray("rows").size());
  }

  @Test
  void aRowLargerThanTheMaximumIsLimitExceededFromEveryReadToolAndThePageBeforeItEndsAtIt() {
    String advice = "select fewer or smaller columns";
    JsonObject q = harness.error(ServiceHarness.READER, "query", new JsonObject().put("sql", "SELECT * FROM it_huge WHERE id = 2")
        .put("max_bytes", 4 * 1024 * 1024), "LIMIT_EXCEEDED");
    assertTrue(q.getString("message").contains(advice), q.getString("message"));
    JsonObject g = harness.error(ServiceHarness.READER, "get_row", new JsonObject().put("table", "it_huge").put("key", 2), "LIMIT_EXCEEDED");
    assertTrue(g.getString("message").contains(advice), g.getString("message"));

    JsonObject first = harness.ok(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_huge").put("max_bytes", 4 * 1024 * 1024));
    assertEquals(List.of(1), first.getJsonArray("rows").stream().map(r -> ((JsonObject) r).getInteger("id")).toList());
    assertEquals(true, first.getBoolean("truncated"));
    JsonObject next = harness.error(ServiceHarness.READER, "list_rows", new JsonObject().put("table", "it_huge").put("max_bytes", 4 * 1024 * 1024)
        .put("cursor", first.getString("next_cursor")), "LIMIT_EXCEEDED");
    assertTrue(next.getString("message").contains(advice), next.getString("message"));
    assertEquals(List.of(4), harness.ok(ServiceHarness.READER, "get_row", new JsonObject().put("table", "it_huge").put("key", 4))
        .getJsonObject("row").stream().filter(e -> e.getKey().equals("id")).map(e -> (Integer) e.getValue()).toList(),
        "the node keeps serving");
  }
}
