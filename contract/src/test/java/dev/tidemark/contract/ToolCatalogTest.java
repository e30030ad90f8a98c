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
  void theArgumentReferenceNamesArgumentsThatTheInputSchemaLeavesUndescribed() {
    for (ToolDescriptor tool : ToolCatalog.all()) {
      JsonObject properties = tool.inputSchema().getJsonObject("properties", new JsonObject());
      for (String argument : tool.argumentReference().fieldNames()) {
        assertTrue(properties.containsKey(argument), tool.name() + " has no argument " + argument);
        assertFalse(properties.getJsonObject(argument).containsKey("description"),
            tool.name() + " describes " + argument + " twice: in its input schema and in argumentReference");
        assertFalse(tool.argumentReference().getString(argument).isBlank(), tool.name() + " " + argument);
      }
    }
  }

  @Test
  void theWireFormOfAStringEnumDropsItsTypeAndStillRefusesWhatTheTypeRefused() {
    JsonObject result = new JsonObject().put("type", "object")
        .put("properties", new JsonObject().put("mode", new JsonObject().put("type", "string").put("enum", new JsonArray().add("plan").add("commit")))
            .put("mixed", new JsonObject().put("type", "string").put("enum", new JsonArray().add("a").add(1))))
        .put("required", new JsonArray().add("mode"));
    JsonObject wire = ToolDescriptor.wireOutputSchema(result);
    JsonObject properties = wire.getJsonObject("properties");
    assertFalse(properties.getJsonObject("mode").containsKey("type"));
    assertEquals("string", properties.getJsonObject("mixed").getString("type"), "an enum that is not all strings keeps its type");
    Validator validator = Validator.create(JsonSchema.of(wire), new JsonSchemaOptions()
        .setDraft(Draft.DRAFT202012).setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Basic));
    assertTrue(validator.validate(new JsonObject().put("mode", "plan")).getValid());
    assertFalse(validator.validate(new JsonObject().put("mode", "other")).getValid());
    assertFalse(validator.validate(new JsonObject().put("mode", 1)).getValid());
    assertFalse(validator.validate(new JsonObject().put("mode", new JsonArray().add("plan"))).getValid());
  }

  @Test
  void theWireOutputSchemaNamesEveryResultFieldWithItsTypeAndNothingInsideIt() {
    for (ToolDescriptor tool : ToolCatalog.all()) {
      JsonObject result = tool.resultSchema().getJsonObject("properties");
      JsonObject wire = tool.outputSchema().getJsonObject("properties");
      assertEquals(new java.util.TreeSet<>(result.fieldNames()), new java.util.TreeSet<>(
          wire.fieldNames().stream().filter(f -> !f.equals("error")).toList()), tool.name());
      for (String field : result.fieldNames()) {
        JsonObject shown = wire.getJsonObject(field);
        assertFalse(shown.containsKey("properties") || shown.containsKey("$ref"), tool.name() + "." + field + " is one level deep");
        assertEquals(result.getJsonObject(field).getValue("enum"), shown.getValue("enum"), tool.name() + "." + field);
        if (!result.getJsonObject(field).containsKey("enum")) {
          assertEquals(result.getJsonObject(field).getValue("type"), shown.getValue("type"), tool.name() + "." + field);
        }
      }
      assertFalse(tool.outputSchema().containsKey("$defs"), tool.name());
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

  @Test
  void toolsListShowsTheInputSchemaWithoutTheBoundsOnlyTheGatewayNeeds() {
    JsonObject listed = ToolCatalog.find("update_rows").orElseThrow().toMcp().getJsonObject("inputSchema");
    assertFalse(listed.containsKey("additionalProperties"), listed.encode());
    assertFalse(listed.encode().contains("maxLength") || listed.encode().contains("minLength"), listed.encode());
    assertEquals(false, ToolCatalog.find("update_rows").orElseThrow().inputSchema().getValue("additionalProperties"),
        "the schema the gateway checks stays closed");
    assertEquals(32, listed.getJsonObject("properties").getJsonObject("key").getInteger("maxItems"), "a batch bound a model acts on stays");
    JsonObject named = new JsonObject().put("type", "object").put("properties", new JsonObject()
        .put("maxLength", new JsonObject().put("type", "integer").put("minimum", 1))
        .put("label", new JsonObject().put("type", "string").put("maxLength", 20).put("enum", new JsonArray().add("a"))))
        .put("additionalProperties", false);
    JsonObject wire = ToolDescriptor.wireInputSchema(named);
    assertEquals(new JsonObject().put("type", "integer").put("minimum", 1), wire.getJsonObject("properties").getJsonObject("maxLength"),
        "an argument named like a keyword stays");
    assertEquals(new JsonObject().put("type", "string").put("enum", new JsonArray().add("a")),
        wire.getJsonObject("properties").getJsonObject("label"));
  }

  @Test
  void toolsListShowsOnlyTheAnnotationsThatDifferFromMcpsDefaults() {
    JsonObject read = new JsonObject().put("readOnlyHint", true).put("destructiveHint", false).put("idempotentHint", true)
        .put("openWorldHint", false);
    assertEquals(new JsonObject().put("readOnlyHint", true).put("openWorldHint", false), ToolDescriptor.wireAnnotations(read));
    JsonObject change = new JsonObject().put("readOnlyHint", false).put("destructiveHint", true).put("idempotentHint", false)
        .put("openWorldHint", false);
    assertEquals(new JsonObject().put("openWorldHint", false), ToolDescriptor.wireAnnotations(change));
    JsonObject ack = new JsonObject().put("readOnlyHint", false).put("destructiveHint", false).put("idempotentHint", true)
        .put("openWorldHint", true);
    assertEquals(new JsonObject().put("destructiveHint", false).put("idempotentHint", true), ToolDescriptor.wireAnnotations(ack));
  }
}
