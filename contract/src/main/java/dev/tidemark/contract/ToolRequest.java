package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;
import java.util.Objects;

/**
 * A validated tool call on its way from a gateway to the service that runs it. {@code requestId}
 * is unique in the cluster and lets a later message (a cancellation) find the call.
 *
 * <p>{@code traceparent} and {@code tracestate} are the W3C trace context of the span the request
 * runs under, or null when it has none: sent by the gateway with its server span, and replaced by
 * the service with its own span before the tool runs, so that what the tool hands PostgreSQL names
 * the span that ran the statement. Both are absent from the wire when null; a node of an earlier
 * version ignores them, and one that gets none starts a new trace.
 *
 * <p>{@code named} is the definition of the team-defined tool the call runs ({@link NamedTool#toJson}),
 * null for every other tool: the service runs the statement the gateway showed, whatever the
 * configuration of its own node says at that moment. Absent from the wire when null.
 */
public record ToolRequest(String requestId, String database, String tool, JsonObject arguments, Caller caller,
    String traceparent, String tracestate, JsonObject named) {

  public ToolRequest {
    Objects.requireNonNull(requestId, "requestId");
    Objects.requireNonNull(database, "database");
    Objects.requireNonNull(tool, "tool");
    Objects.requireNonNull(caller, "caller");
    arguments = arguments == null ? new JsonObject() : arguments;
    traceparent = traceparent == null || traceparent.isEmpty() ? null : traceparent;
    tracestate = traceparent == null || tracestate == null || tracestate.isEmpty() ? null : tracestate;
  }

  /** A request of a built-in tool. */
  public ToolRequest(String requestId, String database, String tool, JsonObject arguments, Caller caller,
      String traceparent, String tracestate) {
    this(requestId, database, tool, arguments, caller, traceparent, tracestate, null);
  }

  /** A request outside any trace. */
  public ToolRequest(String requestId, String database, String tool, JsonObject arguments, Caller caller) {
    this(requestId, database, tool, arguments, caller, null, null);
  }

  /** This request under another span's trace context. */
  public ToolRequest withTrace(String traceparent, String tracestate) {
    return new ToolRequest(requestId, database, tool, arguments, caller, traceparent, tracestate, named);
  }

  /** This request running the named tool {@code definition}. */
  public ToolRequest withNamed(NamedTool definition) {
    return new ToolRequest(requestId, database, tool, arguments, caller, traceparent, tracestate, definition.toJson());
  }

  /** The same request with other arguments (a named tool's own, turned into those of the tool that runs it). */
  public ToolRequest withArguments(JsonObject other) {
    return new ToolRequest(requestId, database, tool, other, caller, traceparent, tracestate, named);
  }

  /** The named tool this request runs, or null for a built-in one. */
  public NamedTool namedTool() {
    return named == null ? null : NamedTool.fromJson(named);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject()
        .put("request_id", requestId)
        .put("database", database)
        .put("tool", tool)
        .put("arguments", arguments)
        .put("caller", caller.toJson());
    if (traceparent != null) {
      json.put("traceparent", traceparent);
    }
    if (tracestate != null) {
      json.put("tracestate", tracestate);
    }
    if (named != null) {
      json.put("named", named);
    }
    return json;
  }

  public static ToolRequest fromJson(JsonObject json) {
    return new ToolRequest(
        json.getString("request_id"),
        json.getString("database"),
        json.getString("tool"),
        json.getJsonObject("arguments"),
        Caller.fromJson(json.getJsonObject("caller")),
        json.getValue("traceparent") instanceof String tp ? tp : null,
        json.getValue("tracestate") instanceof String ts ? ts : null,
        json.getValue("named") instanceof JsonObject n ? n : null);
  }
}
