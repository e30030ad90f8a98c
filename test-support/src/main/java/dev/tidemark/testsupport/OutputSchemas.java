package dev.tidemark.testsupport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolCatalog;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;

/**
 * Checks a tool's structuredContent against the outputSchema the tool declares in tools/list and,
 * for a result that is not an error, against its full result schema, every level of it.
 */
public final class OutputSchemas {

  private OutputSchemas() {}

  public static void assertFits(String tool, JsonObject structuredContent) {
    assertFits(tool, ToolCatalog.find(tool).orElseThrow().outputSchema().copy(), structuredContent);
    if (!structuredContent.containsKey("error")) {
      assertFits(tool, ToolCatalog.find(tool).orElseThrow().resultSchema().copy(), structuredContent);
    }
  }

  private static void assertFits(String tool, JsonObject schema, JsonObject structuredContent) {
    OutputUnit result = Validator.create(JsonSchema.of(schema), new JsonSchemaOptions()
            .setDraft(Draft.DRAFT202012).setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Basic))
        .validate(structuredContent);
    assertTrue(result.getValid(), () -> tool + " structuredContent does not fit its outputSchema: " + result.toJson().encode()
        + "\n" + structuredContent.encodePrettily());
  }
}
