package dev.tidemark.gateway;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * Extra tools, resources and prompts served by the gateway itself, on top of the database's.
 * Production registers none; the conformance fixtures are one, loaded only by a test-only module.
 * Every method answers MCP objects as the 2025-11-25 schema defines them.
 */
public interface McpExtension {

  /** MCP {@code Tool} objects. */
  default List<JsonObject> tools() {
    return List.of();
  }

  /** A {@code CallToolResult}; only called for a name listed by {@link #tools()}. */
  default Future<JsonObject> callTool(String name, JsonObject arguments, ExtensionContext context) {
    return Future.failedFuture(new IllegalStateException("no tool " + name));
  }

  /** MCP {@code Resource} objects. */
  default List<JsonObject> resources() {
    return List.of();
  }

  /** MCP {@code ResourceTemplate} objects. */
  default List<JsonObject> resourceTemplates() {
    return List.of();
  }

  /** The {@code contents} of a resource this extension owns, or null when the URI is not its. */
  default Future<List<JsonObject>> readResource(String uri) {
    return Future.succeededFuture(null);
  }

  /** MCP {@code Prompt} objects. */
  default List<JsonObject> prompts() {
    return List.of();
  }

  /** A {@code GetPromptResult}, or null when the prompt is not this extension's. */
  default Future<JsonObject> getPrompt(String name, JsonObject arguments) {
    return Future.succeededFuture(null);
  }

  /** Like {@link #getPrompt(String, JsonObject)}, for a prompt that may ask the client while it is built. */
  default Future<JsonObject> getPrompt(String name, JsonObject arguments, ExtensionContext context) {
    return getPrompt(name, arguments);
  }
}
