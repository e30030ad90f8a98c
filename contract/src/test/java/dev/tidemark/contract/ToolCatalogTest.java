package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ToolCatalogTest {

  @Test
  void everyToolHasAClosedInputSchemaAnOutputSchemaAndADescription() {
    assertFalse(ToolCatalog.all().isEmpty());
    for (ToolDescriptor tool : ToolCatalog.all()) {
      assertTrue(tool.name().matches("[a-z_]{1,64}"), tool.name());
      assertFalse(tool.description().isBlank(), tool.name());
      assertEquals("object", tool.inputSchema().getString("type"), tool.name());
      assertEquals(false, tool.inputSchema().getValue("additionalProperties"), tool.name() + " input schema must be closed");
      assertEquals("https://json-schema.org/draft/2020-12/schema", tool.inputSchema().getString("$schema"));
      assertEquals("object", tool.outputSchema().getString("type"), tool.name());
      for (String field : tool.inputSchema().getJsonObject("properties", new JsonObject()).fieldNames()) {
        assertTrue(field.matches("[a-z][a-z0-9_]*"), tool.name() + " argument " + field + " is not snake_case");
      }
    }
  }

  @Test
  void readToolsAreAnnotatedReadOnlyAndIdempotent() {
    for (ToolDescriptor tool : ToolCatalog.all()) {
      if (tool.service() == Service.QUERY) {
        assertEquals(true, tool.annotations().getBoolean("readOnlyHint"), tool.name());
        assertEquals(true, tool.annotations().getBoolean("idempotentHint"), tool.name());
        assertEquals(false, tool.annotations().getBoolean("destructiveHint"), tool.name());
      }
    }
  }

  @Test
  void theMcpFormCarriesEveryField() {
    JsonObject mcp = ToolCatalog.find("status").orElseThrow().toMcp();
    for (String field : new String[] {"name", "title", "description", "inputSchema", "outputSchema", "annotations"}) {
      assertTrue(mcp.containsKey(field), field);
    }
  }
}
