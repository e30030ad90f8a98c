package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.Validator;
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
      // JSON Schema 2020-12 is the dialect MCP assumes when a schema names none; naming it costs every tools/list
      assertFalse(tool.inputSchema().containsKey("$schema"), tool.name());
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

  @Test
  void everyOutputSchemaAdmitsTheErrorShapeAloneButNotAnEmptyResult() {
    JsonObject error = new ToolException(ErrorCode.NOT_FOUND, "No such table.", new JsonObject().put("argument", "table")).toJson();
    for (ToolDescriptor tool : ToolCatalog.all()) {
      Validator validator = Validator.create(JsonSchema.of(tool.outputSchema().copy()), new JsonSchemaOptions()
          .setDraft(Draft.DRAFT202012).setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Basic));
      assertTrue(validator.validate(new JsonObject().put("error", error)).getValid(), tool.name());
      assertFalse(validator.validate(new JsonObject().put("error", new JsonObject().put("code", "NOT_FOUND"))).getValid(),
          tool.name() + " must require the message");
      if (!tool.resultSchema().getJsonArray("required", new JsonArray()).isEmpty()) {
        assertFalse(validator.validate(new JsonObject()).getValid(), tool.name() + " must still require its result fields");
      }
      assertFalse(tool.outputSchema().encode().contains("\"description\""), tool.name());
    }
  }
}
