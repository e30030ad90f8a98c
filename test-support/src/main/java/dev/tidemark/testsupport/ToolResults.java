package dev.tidemark.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonObject;

/** Tool calls over MCP that must succeed (their structured content fits the output schema) or fail with a given code. */
public final class ToolResults {

  private ToolResults() {}

  public static JsonObject ok(McpHttpClient client, String tool, JsonObject args) {
    JsonObject result = client.callTool(tool, args);
    assertNull(result.getValue("isError"), () -> tool + " failed: " + result.encode());
    JsonObject s = result.getJsonObject("structuredContent");
    OutputSchemas.assertFits(tool, s);
    return s;
  }

  public static JsonObject error(McpHttpClient client, String tool, JsonObject args, String code) {
    JsonObject result = client.callTool(tool, args);
    assertEquals(true, result.getBoolean("isError"), () -> tool + " should fail: " + result.encode());
    JsonObject e = result.getJsonObject("structuredContent").getJsonObject("error");
    assertEquals(code, e.getString("code"), e::encode);
    return e;
  }

  /** The entry of the result's array {@code field} whose {@code table} is {@code table} (a change tool's changes, a migration's tables). */
  public static JsonObject ofTable(JsonObject result, String field, String table) {
    return ServiceHarness.ofTable(result, field, table);
  }
}
