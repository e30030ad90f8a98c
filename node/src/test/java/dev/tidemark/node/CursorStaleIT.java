package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** A page never mixes two states: once a table a cursor reads has changed, the next page is CURSOR_STALE. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CursorStaleIT {

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient client;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    TestNodes.prepareDatabase(infra);
    node = TestNodes.startAlone(infra, "gateway,query,changelog", Map.of());
    client = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN);
    client.initialize();
  }

  @AfterAll
  void stop() {
    client.close();
    TestNodes.stop(node);
  }

  private void sql(String statement) throws Exception {
    try (Connection conn = TestNodes.jdbc(infra)) {
      conn.createStatement().execute(statement);
    }
  }

  private JsonObject page(String tool, JsonObject arguments) {
    return client.callTool(tool, arguments);
  }

  private static String errorCode(JsonObject result) {
    return Boolean.TRUE.equals(result.getBoolean("isError"))
        ? result.getJsonObject("structuredContent").getJsonObject("error").getString("code") : null;
  }

  @Test
  void aChangeToTheListedTableMakesTheNextPageStaleAndAnUnrelatedChangeDoesNot() throws Exception {
    JsonObject first = page("list_rows", new JsonObject().put("table", "support_tickets").put("limit", 10));
    String cursor = first.getJsonObject("structuredContent").getString("next_cursor");
    assertNotNull(cursor);

    sql("UPDATE products SET description = description || '' WHERE id = 7");
    JsonObject second = page("list_rows", new JsonObject().put("table", "support_tickets").put("limit", 10).put("cursor", cursor));
    assertNull(errorCode(second), "a change to another table leaves the cursor fresh: " + second.encode());
    String next = second.getJsonObject("structuredContent").getString("next_cursor");

    sql("UPDATE support_tickets SET labels = labels WHERE id = 250");
    JsonObject third = page("list_rows", new JsonObject().put("table", "support_tickets").put("limit", 10).put("cursor", next));
    assertEquals("CURSOR_STALE", errorCode(third), third.encode());
  }

  @Test
  void aQueryCursorGoesStaleWhenAnyTableItReadsChanges() throws Exception {
    String sql = "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id";
    JsonObject first = page("query", new JsonObject().put("sql", sql).put("limit", 50));
    String cursor = first.getJsonObject("structuredContent").getString("next_cursor");
    assertNotNull(cursor);
    sql("UPDATE customers SET notes = coalesce(notes, '') WHERE id = 499");
    JsonObject second = page("query", new JsonObject().put("sql", sql).put("limit", 50).put("cursor", cursor));
    assertEquals("CURSOR_STALE", errorCode(second), "customers is read through the join: " + second.encode());
  }
}
