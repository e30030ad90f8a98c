package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What a service answers to a {@link ToolRequest}: either a result (a one-line summary, the
 * structured content and, for results that carry rows, the rows to show in the text content) or
 * an error. Optional fields are absent rather than null.
 */
public record ToolReply(String summary, JsonObject structured, JsonArray rows, JsonObject error) {

  public static ToolReply ok(String summary, JsonObject structured) {
    return new ToolReply(summary, structured, null, null);
  }

  public static ToolReply ok(String summary, JsonObject structured, JsonArray rows) {
    return new ToolReply(summary, structured, rows, null);
  }

  public static ToolReply failed(ToolException e) {
    return new ToolReply(null, null, null, e.toJson());
  }

  public boolean isError() {
    return error != null;
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    if (error != null) {
      return json.put("error", error);
    }
    json.put("summary", summary).put("structured", structured);
    if (rows != null) {
      json.put("rows", rows);
    }
    return json;
  }

  public static ToolReply fromJson(JsonObject json) {
    return new ToolReply(
        json.getString("summary"),
        json.getJsonObject("structured"),
        json.getJsonArray("rows"),
        json.getJsonObject("error"));
  }
}
