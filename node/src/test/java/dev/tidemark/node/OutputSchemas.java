package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolCatalog;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;

/** Checks a tool's structuredContent against the outputSchema the tool declares. */
final class OutputSchemas {

  private OutputSchemas() {}

  static void assertFits(String tool, JsonObject structuredContent) {
    JsonObject schema = ToolCatalog.find(tool).orElseThrow().outputSchema().copy();
    OutputUnit result = Validator.create(JsonSchema.of(schema), new JsonSchemaOptions()
            .setDraft(Draft.DRAFT202012).setBaseUri("https://tidemark.dev/schemas/").setOutputFormat(OutputFormat.Basic))
        .validate(structuredContent);
    assertTrue(result.getValid(), () -> tool + " structuredContent does not fit its outputSchema: " + result.toJson().encode()
        + "\n" + structuredContent.encodePrettily());
  }
}
