package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A host may give the model only the text content (Claude Desktop, most frameworks) or only the
 * structured content (VS Code, Claude Code). Each test here reads what it needs to go on from the
 * text alone, as a model behind the first kind of host must, and checks it against the structured
 * content: the schema with its foreign keys, a cursor to the next page, the changelog's head and
 * the next position, a plan's id and the keys it removes.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TextContentIT {

  private NodeHarness node;
  private McpHttpClient client;

  @BeforeAll
  void start(SharedInfra infra) {
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command,changelog", Map.of());
    client = new McpHttpClient(node.mcpUrl(), NodeHarness.READ_WRITE_TOKEN);
    client.initialize();
  }

  @AfterAll
  void stop() {
    client.close();
    ServiceHarness.closeAll(node);
  }

  private static String text(JsonObject result) {
    assertEquals(1, result.getJsonArray("content").size(), result.encode());
    return result.getJsonArray("content").getJsonObject(0).getString("text");
  }

  private static String found(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), "the text carries " + regex + ": " + text);
    return m.group(1);
  }

  /** The lines between the fence's BEGIN and END lines, after checking that there is exactly one fence. */
  private static List<String> fenced(String text) {
    String[] lines = text.split("\n", -1);
    String nonce = lines[1].substring("BEGIN-".length());
    assertTrue(lines[1].startsWith("BEGIN-") && nonce.matches("[0-9a-f]{8}"), text);
    assertEquals("END-" + nonce, lines[lines.length - 1]);
    assertEquals(1, text.split("BEGIN-", -1).length - 1, "one fence per result: " + text);
    return List.of(lines).subList(2, lines.length - 1);
  }

  @Test
  void describeTablesTextCarriesEveryForeignKeyWithItsActionsInTheOneFence() {
    JsonObject result = client.callTool("describe_table", new JsonObject().put("tables", new JsonArray().add("orders").add("order_items")));
    List<String> lines = fenced(text(result));
    int at = lines.indexOf("[\"table\",\"foreign_key\",\"columns\",\"references\",\"referenced_columns\",\"on_update\",\"on_delete\"]");
    assertTrue(at > 0 && lines.get(at - 1).isEmpty(), "the foreign keys have their own names line after an empty line: " + lines);
    int fks = 0;
    for (Object t : result.getJsonObject("structuredContent").getJsonArray("tables")) {
      JsonObject table = (JsonObject) t;
      for (Object f : table.getJsonArray("foreign_keys")) {
        JsonObject fk = (JsonObject) f;
        JsonObject to = fk.getJsonObject("references");
        String row = new JsonArray().add(table.getString("schema") + "." + table.getString("name")).add(fk.getString("name"))
            .add(fk.getJsonArray("columns")).add(to.getString("schema") + "." + to.getString("table")).add(to.getJsonArray("columns"))
            .add(fk.getString("on_update")).add(fk.getString("on_delete")).encode();
        assertTrue(lines.contains(row), row + " in " + lines);
        fks++;
      }
      for (Object c : table.getJsonArray("columns")) {
        String name = ((JsonObject) c).getString("name");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("[\"public." + table.getString("name") + "\",\"" + name + "\",")), name);
      }
    }
    assertTrue(fks >= 2, "orders and order_items hold foreign keys: " + fks);
  }

  @Test
  void aPagesTextCarriesTheCursorThatContinuesIt() {
    JsonObject args = new JsonObject().put("table", "customers").put("columns", new JsonArray().add("id")).put("order", new JsonArray().add("id")).put("limit", 2);
    JsonObject first = client.callTool("list_rows", args);
    String cursor = found(text(first), "more follow: pass cursor (\\S+)");
    assertEquals(first.getJsonObject("structuredContent").getString("next_cursor"), cursor);
    JsonObject second = client.callTool("list_rows", args.copy().put("cursor", cursor));
    assertEquals(null, second.getValue("isError"), second.encode());
    List<String> expected = new java.util.ArrayList<>(List.of("[\"id\"]"));
    second.getJsonObject("structuredContent").getJsonArray("rows").forEach(r -> expected.add("[" + ((JsonObject) r).getLong("id") + "]"));
    assertEquals(expected, fenced(text(second)), "the text carries the rows of the structured content");
    long lastOfFirst = first.getJsonObject("structuredContent").getJsonArray("rows").getJsonObject(1).getLong("id");
    assertTrue(second.getJsonObject("structuredContent").getJsonArray("rows").getJsonObject(0).getLong("id") > lastOfFirst,
        "the cursor read from the text continues after the first page");
  }

  @Test
  void aQuerysTextNamesItsColumnsWithTheirTypesAlsoOnAPageWithoutRows() {
    JsonObject some = client.callTool("query", new JsonObject().put("sql", "SELECT id, name FROM customers ORDER BY id LIMIT 2"));
    assertEquals(null, some.getValue("isError"), some.encode());
    String line = text(some).split("\n", 2)[0];
    assertTrue(line.endsWith("; columns: id int8, name text"), line);
    JsonObject none = client.callTool("query", new JsonObject().put("sql", "SELECT id, name FROM customers WHERE id < 0"));
    assertEquals("query: 0 rows; last page; columns: id int8, name text", text(none), "no fence, and the columns still named");
  }

  @Test
  void statusAndChangesSinceCarryTheirCursorsInTheText() {
    JsonObject status = client.callTool("status", new JsonObject());
    String head = found(text(status), "; changelog_head ([A-Za-z0-9_-]+)");
    assertEquals(status.getJsonObject("structuredContent").getString("changelog_head"), head);
    JsonObject changes = client.callTool("changes_since", new JsonObject().put("cursor", head).put("tables", new JsonArray().add("orders")));
    assertEquals(null, changes.getValue("isError"), changes.encode());
    assertEquals(changes.getJsonObject("structuredContent").getString("next_cursor"), found(text(changes), "; next_cursor (\\S+)"));
  }

  @Test
  void aWatchsTextCarriesItsCursorAndTheNextCallWithItIsACheckpoint() {
    JsonObject args = new JsonObject().put("table", "products").put("where", new JsonObject().put("column", "id").put("op", "eq").put("value", 1));
    JsonObject first = client.callTool("watch", args);
    String cursor = found(text(first), "; cursor (\\S+)");
    assertEquals(first.getJsonObject("structuredContent").getString("cursor"), cursor);
    JsonObject next = client.callTool("watch", args.copy().put("cursor", cursor).put("wait_ms", 0));
    assertEquals(null, next.getValue("isError"), next.encode());
    assertEquals(next.getJsonObject("structuredContent").getString("cursor"), found(text(next), "; cursor (\\S+)"));
  }

  @Test
  void aPlansTextNamesItsIdAndTheKeysItRemovesPerTable() {
    JsonObject order = client.callTool("list_rows", new JsonObject().put("table", "orders").put("limit", 1).put("order", new JsonArray().add("id")))
        .getJsonObject("structuredContent").getJsonArray("rows").getJsonObject(0);
    long customer = order.getLong("customer_id");
    JsonObject result = client.callTool("delete_rows", new JsonObject().put("table", "customers").put("key", customer));
    JsonObject plan = result.getJsonObject("structuredContent");
    String text = text(result);
    String planId = found(text, "^delete_rows: plan (p4\\.[A-Za-z0-9_-]+) ");
    assertEquals(plan.getString("plan_id"), planId);
    assertTrue(planId.length() <= 48, planId);
    assertTrue(text.lines().findFirst().orElseThrow().contains("confirm: true"), "the consent it needs: " + text);
    List<String> lines = fenced(text);
    assertEquals("[\"table\",\"op\",\"rows\",\"keys\"]", lines.get(0));
    assertTrue(lines.contains("[\"public.customers\",\"DELETE\",1,[" + customer + "]]"), lines.toString());
    String orders = lines.stream().filter(l -> l.startsWith("[\"public.orders\",\"DELETE\",")).findFirst().orElse(null);
    assertNotNull(orders, lines.toString());
    assertTrue(orders.contains(String.valueOf(order.getLong("id"))), "the order the cascade removes, by its key: " + orders);
    for (Object c : plan.getJsonArray("changes")) {
      JsonObject t = (JsonObject) c;
      if (t.getInteger("deleted") > 0) {
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("[\"" + t.getString("table") + "\",\"DELETE\"," + t.getInteger("deleted") + ",")),
            "the count per table of the structured content: " + t.encode() + " in " + lines);
      }
    }
    assertFalse(text.contains("\"before\""), "the rows themselves are the samples' and the consent's, not the text's: " + text);
  }
}
