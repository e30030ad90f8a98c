package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A validated tool call on its way from a gateway to the service that runs it. {@code requestId}
 * is unique in the cluster and lets a later message (a cancellation) find the call.
 */
public record ToolRequest(String requestId, String database, String tool, JsonObject arguments, Caller caller) {

  public ToolRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(caller, "caller");
    arguments = arguments == null ? new JsonObject() : arguments;
  }

  public JsonObject toJson() {
    return new JsonObject()
        .put("request_id", requestId)
        .put("database", database)
        .put("tool", tool)
        .put("arguments", arguments)
        .put("caller", caller.toJson());
  }

  public static ToolRequest fromJson(JsonObject json) {
    return new ToolRequest(
        json.getString("request_id"),
        json.getString("database"),
        json.getString("tool"),
        json.getJsonObject("arguments"),
        Caller.fromJson(json.getJsonObject("caller")));
  }
}
