package dev.tidemark.conformance;

import dev.tidemark.gateway.ExtensionContext;
import dev.tidemark.gateway.McpExtension;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The tools, resources and prompts the MCP conformance suite expects a server to have, plus one
 * tool ({@code test_trigger_update}) that lets a client test provoke a resource update. Test only:
 * the production runnable never contains this class.
 */
public final class ConformanceFixtures implements McpExtension {

  static final String PNG_1X1 =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
  /** A WAV header and two silent samples. */
  static final String WAV_SILENCE = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA==";
  static final String WATCHED = "test://watched-resource";
  private static final Pattern TEMPLATE = Pattern.compile("test://template/([^/]+)/data");

  private final Vertx vertx;

  public ConformanceFixtures(Vertx vertx) {
    this.vertx = vertx;
  }

  private static JsonObject tool(String name, String description, JsonObject properties, String... required) {
    JsonObject schema = new JsonObject().put("type", "object").put("properties", properties).put("additionalProperties", false);
    if (required.length > 0) {
      schema.put("required", new JsonArray(List.of((Object[]) required)));
    }
    return new JsonObject().put("name", name).put("description", description).put("inputSchema", schema);
  }

  private static JsonObject text(String text) {
    return new JsonObject().put("type", "text").put("text", text);
  }

  private static JsonObject result(JsonObject... content) {
    return new JsonObject().put("content", new JsonArray(List.of((Object[]) content)));
  }

  @Override
  public List<JsonObject> tools() {
    JsonObject str = new JsonObject().put("type", "string");
    return List.of(
        tool("test_simple_text", "Answers with one text block.", new JsonObject()),
        tool("test_image_content", "Answers with a 1x1 PNG image.", new JsonObject()),
        tool("test_audio_content", "Answers with a short WAV sound.", new JsonObject()),
        tool("test_embedded_resource", "Answers with an embedded text resource.", new JsonObject()),
        tool("test_multiple_content_types", "Answers with text, an image and a resource.", new JsonObject()),
        tool("test_tool_with_logging", "Sends three log messages while it runs.", new JsonObject()),
        tool("test_error_handling", "Always fails, as a tool error.", new JsonObject()),
        tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", new JsonObject()),
        tool("test_sampling", "Asks the client's model to complete the prompt.", new JsonObject().put("prompt", str.copy()), "prompt"),
        tool("test_elicitation", "Asks the user for a user name and an email address.", new JsonObject().put("message", str.copy()), "message"),
        tool("test_elicitation_sep1034_defaults", "Asks the user with a form whose fields have defaults.", new JsonObject()),
        tool("test_elicitation_sep1330_enums", "Asks the user with every kind of enum field.", new JsonObject()),
        new JsonObject().put("name", "json_schema_2020_12_tool")
            .put("description", "Takes a name, an address and a way to be reached, with a JSON Schema 2020-12 input schema.")
            .put("inputSchema", jsonSchema202012()),
        tool("test_trigger_update", "Tells subscribers of test://watched-resource that it changed.", new JsonObject()));
  }

  /**
   * The suite's JSON Schema 2020-12 fixture: {@code $defs} with an {@code $anchor}, a {@code $ref},
   * {@code allOf}/{@code anyOf} and {@code if}/{@code then}/{@code else}; served as written, and
   * the gateway validates calls against all of it (phone or email required, by contactMethod).
   */
  static JsonObject jsonSchema202012() {
    JsonObject str = new JsonObject().put("type", "string");
    return new JsonObject()
        .put("$schema", "https://json-schema.org/draft/2020-12/schema")
        .put("type", "object")
        .put("$defs", new JsonObject().put("address", new JsonObject().put("$anchor", "addressDef").put("type", "object")
            .put("properties", new JsonObject().put("street", str.copy()).put("city", str.copy()))))
        .put("properties", new JsonObject().put("name", str.copy()).put("address", new JsonObject().put("$ref", "#/$defs/address"))
            .put("contactMethod", str.copy().put("enum", new JsonArray().add("phone").add("email")))
            .put("phone", str.copy()).put("email", str.copy()))
        .put("allOf", new JsonArray().add(new JsonObject().put("anyOf", new JsonArray()
            .add(new JsonObject().put("required", new JsonArray().add("phone")))
            .add(new JsonObject().put("required", new JsonArray().add("email"))))))
        .put("if", new JsonObject().put("properties", new JsonObject().put("contactMethod", new JsonObject().put("const", "phone")))
            .put("required", new JsonArray().add("contactMethod")))
        .put("then", new JsonObject().put("required", new JsonArray().add("phone")))
        .put("else", new JsonObject().put("required", new JsonArray().add("email")))
        .put("additionalProperties", false);
  }

  @Override
  public Future<JsonObject> callTool(String name, JsonObject arguments, ExtensionContext context) {
    return switch (name) {
      case "test_simple_text" -> Future.succeededFuture(result(text("This is a simple text response for testing.")));
      case "test_image_content" -> Future.succeededFuture(result(
          new JsonObject().put("type", "image").put("data", PNG_1X1).put("mimeType", "image/png")));
      case "test_audio_content" -> Future.succeededFuture(result(
          new JsonObject().put("type", "audio").put("data", WAV_SILENCE).put("mimeType", "audio/wav")));
      case "test_embedded_resource" -> Future.succeededFuture(result(new JsonObject().put("type", "resource").put("resource",
          new JsonObject().put("uri", "test://embedded-resource").put("mimeType", "text/plain").put("text", "This is an embedded resource content."))));
      case "test_multiple_content_types" -> Future.succeededFuture(result(
          text("Multiple content types test:"),
          new JsonObject().put("type", "image").put("data", PNG_1X1).put("mimeType", "image/png"),
          new JsonObject().put("type", "resource").put("resource", new JsonObject().put("uri", "test://mixed-content-resource")
              .put("mimeType", "application/json").put("text", "{\"test\":\"data\",\"value\":123}"))));
      case "test_tool_with_logging" -> {
        context.log("info", "Tool execution started");
        yield after(50).compose(v -> {
          context.log("info", "Tool processing data");
          return after(50);
        }).map(v -> {
          context.log("info", "Tool execution completed");
          return result(text("Tool with logging executed successfully"));
        });
      }
      case "test_error_handling" -> Future.succeededFuture(result(text("This tool intentionally returns an error for testing")).put("isError", true));
      case "test_tool_with_progress" -> {
        context.progress(0, 100.0, "Starting");
        yield after(50).compose(v -> {
          context.progress(50, 100.0, "Halfway");
          return after(50);
        }).map(v -> {
          context.progress(100, 100.0, "Done");
          return result(text("Progress tool completed"));
        });
      }
      case "test_sampling" -> context.request("sampling/createMessage", new JsonObject()
              .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", text(arguments.getString("prompt")))))
              .put("maxTokens", 100))
          .map(r -> result(text("LLM response: " + textOf(r.getValue("content")))));
      case "test_elicitation" -> context.request("elicitation/create", new JsonObject()
              .put("message", arguments.getString("message"))
              .put("requestedSchema", new JsonObject().put("type", "object")
                  .put("properties", new JsonObject()
                      .put("username", new JsonObject().put("type", "string").put("description", "User's response"))
                      .put("email", new JsonObject().put("type", "string").put("description", "User's email address")))
                  .put("required", new JsonArray().add("username").add("email"))))
          .map(r -> result(text("User response: action=" + r.getString("action") + ", content=" + r.getValue("content"))));
      case "test_elicitation_sep1034_defaults" -> context.request("elicitation/create", new JsonObject()
              .put("message", "Please review and update the form fields with defaults")
              .put("requestedSchema", new JsonObject().put("type", "object").put("properties", new JsonObject()
                  .put("name", new JsonObject().put("type", "string").put("description", "User name").put("default", "John Doe"))
                  .put("age", new JsonObject().put("type", "integer").put("description", "User age").put("default", 30))
                  .put("score", new JsonObject().put("type", "number").put("description", "User score").put("default", 95.5))
                  .put("status", new JsonObject().put("type", "string").put("description", "User status")
                      .put("enum", new JsonArray().add("active").add("inactive").add("pending")).put("default", "active"))
                  .put("verified", new JsonObject().put("type", "boolean").put("description", "Verification status").put("default", true)))))
          .map(r -> result(text("Elicitation completed: action=" + r.getString("action") + ", content=" + r.getValue("content"))));
      case "test_elicitation_sep1330_enums" -> context.request("elicitation/create", new JsonObject()
              .put("message", "Please select options from the enum fields")
              .put("requestedSchema", new JsonObject().put("type", "object").put("properties", new JsonObject()
                  .put("untitledSingle", new JsonObject().put("type", "string").put("enum", new JsonArray().add("option1").add("option2").add("option3")))
                  .put("titledSingle", new JsonObject().put("type", "string").put("oneOf", new JsonArray()
                      .add(new JsonObject().put("const", "value1").put("title", "First Option"))
                      .add(new JsonObject().put("const", "value2").put("title", "Second Option"))))
                  .put("legacyEnum", new JsonObject().put("type", "string").put("enum", new JsonArray().add("opt1").add("opt2"))
                      .put("enumNames", new JsonArray().add("Option One").add("Option Two")))
                  .put("untitledMulti", new JsonObject().put("type", "array").put("items",
                      new JsonObject().put("type", "string").put("enum", new JsonArray().add("option1").add("option2"))))
                  .put("titledMulti", new JsonObject().put("type", "array").put("items", new JsonObject().put("anyOf", new JsonArray()
                      .add(new JsonObject().put("const", "value1").put("title", "First Choice"))
                      .add(new JsonObject().put("const", "value2").put("title", "Second Choice"))))))))
          .map(r -> result(text("Elicitation completed: action=" + r.getString("action") + ", content=" + r.getValue("content"))));
      case "json_schema_2020_12_tool" -> Future.succeededFuture(result(text("Received: " + arguments.encode())));
      case "test_trigger_update" -> context.resourceUpdated(WATCHED).map(v -> result(text("Updated " + WATCHED)));
      default -> Future.failedFuture(new IllegalArgumentException("no fixture tool " + name));
    };
  }

  private static String textOf(Object content) {
    return content instanceof JsonObject c && c.getValue("text") instanceof String t ? t : String.valueOf(content);
  }

  private Future<Void> after(long millis) {
    Promise<Void> p = Promise.promise();
    vertx.setTimer(millis, t -> p.complete());
    return p.future();
  }

  @Override
  public List<JsonObject> resources() {
    return List.of(
        new JsonObject().put("uri", "test://static-text").put("name", "static-text").put("description", "A static text resource.")
            .put("mimeType", "text/plain"),
        new JsonObject().put("uri", "test://static-binary").put("name", "static-binary").put("description", "A static PNG image.")
            .put("mimeType", "image/png"),
        new JsonObject().put("uri", WATCHED).put("name", "watched-resource").put("description", "A resource that can be subscribed to.")
            .put("mimeType", "text/plain"));
  }

  @Override
  public List<JsonObject> resourceTemplates() {
    return List.of(new JsonObject().put("uriTemplate", "test://template/{id}/data").put("name", "template")
        .put("description", "Data for an id.").put("mimeType", "application/json"));
  }

  @Override
  public Future<List<JsonObject>> readResource(String uri) {
    Matcher m = TEMPLATE.matcher(uri);
    JsonObject content = switch (uri) {
      case "test://static-text" -> new JsonObject().put("uri", uri).put("mimeType", "text/plain")
          .put("text", "This is the content of the static text resource.");
      case "test://static-binary" -> new JsonObject().put("uri", uri).put("mimeType", "image/png").put("blob", PNG_1X1);
      case WATCHED -> new JsonObject().put("uri", uri).put("mimeType", "text/plain").put("text", "Watched resource content");
      default -> m.matches()
          ? new JsonObject().put("uri", uri).put("mimeType", "application/json")
              .put("text", new JsonObject().put("id", m.group(1)).put("templateTest", true).put("data", "Data for ID: " + m.group(1)).encode())
          : null;
    };
    return Future.succeededFuture(content == null ? null : List.of(content));
  }

  @Override
  public List<JsonObject> prompts() {
    return List.of(
        new JsonObject().put("name", "test_simple_prompt").put("description", "A prompt without arguments."),
        new JsonObject().put("name", "test_prompt_with_arguments").put("description", "A prompt with two required arguments.")
            .put("arguments", new JsonArray()
                .add(new JsonObject().put("name", "arg1").put("description", "First test argument").put("required", true))
                .add(new JsonObject().put("name", "arg2").put("description", "Second test argument").put("required", true))),
        new JsonObject().put("name", "test_prompt_with_embedded_resource").put("description", "A prompt that embeds a resource.")
            .put("arguments", new JsonArray().add(new JsonObject().put("name", "resourceUri").put("description", "The resource to embed").put("required", true))),
        new JsonObject().put("name", "test_prompt_with_image").put("description", "A prompt with an image."));
  }

  @Override
  public Future<JsonObject> getPrompt(String name, JsonObject arguments) {
    JsonObject user = new JsonObject().put("role", "user");
    return switch (name) {
      case "test_simple_prompt" -> messages(user.put("content", text("This is a simple prompt for testing.")));
      case "test_prompt_with_arguments" -> {
        if (!(arguments.getValue("arg1") instanceof String a1) || !(arguments.getValue("arg2") instanceof String a2)) {
          yield Future.failedFuture(new IllegalArgumentException("arg1 and arg2 are required"));
        }
        yield messages(user.put("content", text("Prompt with arguments: arg1='" + a1 + "', arg2='" + a2 + "'")));
      }
      case "test_prompt_with_embedded_resource" -> {
        if (!(arguments.getValue("resourceUri") instanceof String uri)) {
          yield Future.failedFuture(new IllegalArgumentException("resourceUri is required"));
        }
        yield messages(
            new JsonObject().put("role", "user").put("content", new JsonObject().put("type", "resource").put("resource",
                new JsonObject().put("uri", uri).put("mimeType", "text/plain").put("text", "Embedded resource content for testing."))),
            user.put("content", text("Please process the embedded resource above.")));
      }
      case "test_prompt_with_image" -> messages(
          new JsonObject().put("role", "user").put("content", new JsonObject().put("type", "image").put("data", PNG_1X1).put("mimeType", "image/png")),
          user.put("content", text("Please analyze the image above.")));
      default -> Future.succeededFuture(null);
    };
  }

  private static Future<JsonObject> messages(JsonObject... messages) {
    return Future.succeededFuture(new JsonObject().put("messages", new JsonArray(List.of((Object[]) messages))));
  }
}
