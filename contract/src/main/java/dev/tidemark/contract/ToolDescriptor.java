package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/**
 * One tool as the contract declares it: the MCP fields shown by {@code tools/list}, and the
 * service that runs it. The JSON resource under {@code tools/} is the single source of truth.
 */
public record ToolDescriptor(
    String name,
    String title,
    String description,
    Service service,
    JsonObject inputSchema,
    JsonObject outputSchema,
    JsonObject annotations) {

  /** The MCP {@code Tool} object. */
  public JsonObject toMcp() {
    return new JsonObject()
        .put("name", name)
        .put("title", title)
        .put("description", description)
        .put("inputSchema", inputSchema.copy())
        .put("outputSchema", outputSchema.copy())
        .put("annotations", annotations.copy().put("title", title));
  }

  static ToolDescriptor fromJson(JsonObject json) {
    return new ToolDescriptor(
        json.getString("name"),
        json.getString("title"),
        json.getString("description"),
        Service.valueOf(json.getString("service")),
        json.getJsonObject("inputSchema"),
        json.getJsonObject("outputSchema"),
        json.getJsonObject("annotations"));
  }
}
