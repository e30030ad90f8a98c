package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * One tool as the contract declares it: the MCP fields shown by {@code tools/list}, the service
 * that runs it, and what the reference page says beyond them. The JSON resource under
 * {@code tools/} is the single source of truth.
 *
 * @param description what a model reads: when to use the tool and what to do next
 * @param reference how the tool behaves in detail, for docs/reference/tools.md only
 * @param argumentReference what docs/reference/tools.md says of an argument whose input schema
 *     carries no description (argument name to text): a model fills most arguments from their
 *     name, their schema and the tool's description, so their meaning costs tools/list nothing
 * @param resultSchema the successful {@code structuredContent}, with a description of every field
 * @param outputSchema the wire form of {@code resultSchema} (see {@link #wireOutputSchema})
 * @param taskSupport whether a call may answer with a task of the {@code io.modelcontextprotocol/tasks}
 *     extension: {@code forbidden} (never), {@code optional} (when the client declares the extension
 *     and the call waits: a long statement, or a change that became a proposal) or {@code required}
 */
public record ToolDescriptor(
    String name,
    String title,
    String description,
    String reference,
    JsonObject argumentReference,
    Service service,
    JsonObject inputSchema,
    JsonObject resultSchema,
    JsonObject outputSchema,
    JsonObject annotations,
    String taskSupport) {

  /** A tool that never answers with a task. */
  public static final String TASKS_FORBIDDEN = "forbidden";
  public static final String TASKS_OPTIONAL = "optional";
  public static final String TASKS_REQUIRED = "required";

  /** A tool that never answers with a task. */
  public ToolDescriptor(String name, String title, String description, String reference, JsonObject argumentReference,
      Service service, JsonObject inputSchema, JsonObject resultSchema, JsonObject outputSchema, JsonObject annotations) {
    this(name, title, description, reference, argumentReference, service, inputSchema, resultSchema, outputSchema, annotations,
        TASKS_FORBIDDEN);
  }

  /**
   * The shape of {@code structuredContent.error} (see {@link ToolException#toJson}), admitted by
   * every output schema: the TypeScript SDK checks {@code structuredContent} against the output
   * schema even when {@code isError} is true, and would otherwise turn every tool error into a
   * -32602 that hides the code and the message.
   */
  public static final JsonObject ERROR_SHAPE =
      new JsonObject().put("type", "object").put("required", new JsonArray().add("code").add("message"));

  /**
   * The MCP {@code Tool} object; {@code execution.taskSupport} only where a call may become a task
   * (absent means forbidden, and costs {@code tools/list} nothing).
   */
  public JsonObject toMcp() {
    JsonObject tool = new JsonObject()
        .put("name", name)
        .put("title", title)
        .put("description", description)
        .put("inputSchema", wireInputSchema(inputSchema))
        .put("outputSchema", outputSchema.copy())
        .put("annotations", wireAnnotations(annotations));
    return TASKS_FORBIDDEN.equals(taskSupport) ? tool : tool.put("execution", new JsonObject().put("taskSupport", taskSupport));
  }

  /** Keywords of an input schema that {@code tools/list} leaves out; the gateway still checks every argument against them. */
  private static final java.util.Set<String> UNLISTED_INPUT_KEYWORDS = java.util.Set.of("minLength", "maxLength", "uniqueItems");

  /**
   * The input schema {@code tools/list} shows: the validated schema without
   * {@code additionalProperties: false} and without string lengths and {@code uniqueItems}. A
   * model fills arguments from their names, types, enums, numeric bounds and defaults; the
   * bounds left out only refuse what no model sends (an 8 KiB plan_id, an argument the schema
   * does not name), and the gateway checks the full schema before any service is asked, naming
   * the argument and the rule. Every tool's list entry paid for them on every connection.
   */
  static JsonObject wireInputSchema(JsonObject inputSchema) {
    return (JsonObject) withoutKeywords(inputSchema);
  }

  private static Object withoutKeywords(Object schema) {
    if (schema instanceof JsonObject o) {
      JsonObject copy = new JsonObject();
      for (Map.Entry<String, Object> e : o) {
        if ("properties".equals(e.getKey()) || "$defs".equals(e.getKey())) {
          // names of arguments or definitions, not keywords: an argument may be called maxLength
          JsonObject named = new JsonObject();
          ((JsonObject) e.getValue()).forEach(p -> named.put(p.getKey(), withoutKeywords(p.getValue())));
          copy.put(e.getKey(), named);
        } else if (!UNLISTED_INPUT_KEYWORDS.contains(e.getKey())
            && !("additionalProperties".equals(e.getKey()) && Boolean.FALSE.equals(e.getValue()))) {
          copy.put(e.getKey(), withoutKeywords(e.getValue()));
        }
      }
      return copy;
    }
    return schema instanceof JsonArray a ? each(a, ToolDescriptor::withoutKeywords) : schema;
  }

  /** A copy of {@code array} with {@code f} applied to each item. */
  private static JsonArray each(JsonArray array, java.util.function.UnaryOperator<Object> f) {
    JsonArray copy = new JsonArray();
    array.forEach(v -> copy.add(f.apply(v)));
    return copy;
  }

  /**
   * The annotations {@code tools/list} shows: only the hints that differ from MCP's defaults
   * (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true) and
   * apply. MCP reads destructiveHint and idempotentHint only when readOnlyHint is false, so a
   * read-only tool shows readOnlyHint alone beside openWorldHint; a client reads the same hints
   * either way.
   */
  static JsonObject wireAnnotations(JsonObject annotations) {
    JsonObject wire = annotations.copy();
    boolean readOnly = Boolean.TRUE.equals(wire.getValue("readOnlyHint"));
    if (!readOnly) {
      wire.remove("readOnlyHint");
    }
    if (readOnly || Boolean.TRUE.equals(wire.getValue("destructiveHint"))) {
      wire.remove("destructiveHint");
    }
    if (readOnly || Boolean.FALSE.equals(wire.getValue("idempotentHint"))) {
      wire.remove("idempotentHint");
    }
    if (Boolean.TRUE.equals(wire.getValue("openWorldHint"))) {
      wire.remove("openWorldHint");
    }
    return wire;
  }

  /**
   * The output schema {@code tools/list} shows: the result schema without descriptions (the
   * reference page carries them; a model reads the tool's description and input schema, and a
   * client only validates), without {@code additionalProperties: false} (results only ever
   * gain fields, and a client that cached an older schema must still accept them) and without a
   * {@code type: "string"} beside an {@code enum} of strings (the enum admits strings alone, so
   * the type admits nothing more or less), admitting either the result or {@code {error}}.
   * It describes the result's fields and their types, one level deep, and the item type of an
   * array of scalars (an array of objects is only an array there): what a field holds inside
   * (a row's columns, a plan's samples) is on the reference page only. A host caches every tool's
   * output schema with {@code tools/list}, where each nested level cost tokens on every
   * connection, and the full result schema (whose every level the tests check results against)
   * adds nothing a client acts on.
   */
  static JsonObject wireOutputSchema(JsonObject resultSchema) {
    JsonObject wire = (JsonObject) structural(resultSchema);
    wire.remove("$defs");
    JsonArray required = (JsonArray) wire.remove("required");
    JsonObject properties = new JsonObject();
    wire.getJsonObject("properties").forEach(e -> properties.put(e.getKey(), shallow((JsonObject) e.getValue())));
    wire.put("properties", properties.put("error", ERROR_SHAPE.copy()));
    return wire.put("anyOf", new JsonArray()
        .add(new JsonObject().put("required", required == null ? new JsonArray() : required))
        .add(new JsonObject().put("required", new JsonArray().add("error"))));
  }

  /** A field's schema reduced to its type: {@code type}, {@code enum} and {@code const}, and an array's item type. */
  private static JsonObject shallow(JsonObject field) {
    JsonObject copy = new JsonObject();
    for (String keyword : new String[] {"type", "enum", "const"}) {
      if (field.containsKey(keyword)) {
        copy.put(keyword, field.getValue(keyword));
      }
    }
    // an array of objects says nothing more than an array: what the objects hold is the reference page's
    if (field.getValue("items") instanceof JsonObject items && items.containsKey("type") && !"object".equals(items.getValue("type"))) {
      copy.put("items", new JsonObject().put("type", items.getValue("type")));
    }
    return copy;
  }

  private static Object structural(Object schema) {
    if (schema instanceof JsonObject o) {
      JsonObject copy = new JsonObject();
      for (Map.Entry<String, Object> e : o) {
        // "properties" maps field names to schemas: a field may itself be called "description"
        boolean keyword = !"properties".equals(e.getKey());
        copy.put(e.getKey(), keyword ? structuralKeywords(e.getValue()) : structuralProperties((JsonObject) e.getValue()));
      }
      copy.remove("description");
      if (Boolean.FALSE.equals(copy.getValue("additionalProperties"))) {
        copy.remove("additionalProperties");
      }
      if ("string".equals(copy.getValue("type")) && copy.getValue("enum") instanceof JsonArray values
          && values.stream().allMatch(String.class::isInstance)) {
        copy.remove("type");
      }
      return copy;
    }
    return schema instanceof JsonArray a ? each(a, ToolDescriptor::structural) : schema;
  }

  private static Object structuralKeywords(Object value) {
    return value instanceof JsonObject || value instanceof JsonArray ? structural(value) : value;
  }

  private static JsonObject structuralProperties(JsonObject properties) {
    JsonObject copy = new JsonObject();
    properties.forEach(e -> copy.put(e.getKey(), structural(e.getValue())));
    return copy;
  }

  static ToolDescriptor fromJson(JsonObject json) {
    JsonObject result = json.getJsonObject("outputSchema");
    return new ToolDescriptor(
        json.getString("name"),
        json.getString("title"),
        json.getString("description"),
        json.getString("reference", ""),
        json.getJsonObject("argumentReference", new JsonObject()),
        Service.valueOf(json.getString("service")),
        json.getJsonObject("inputSchema"),
        result,
        wireOutputSchema(result),
        json.getJsonObject("annotations"),
        json.getJsonObject("execution", new JsonObject()).getString("taskSupport", TASKS_FORBIDDEN));
  }
}
