package dev.tidemark.gateway.impl.tool;

import dev.tidemark.contract.ToolDescriptor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.json.schema.Draft;
import io.vertx.json.schema.JsonSchema;
import io.vertx.json.schema.JsonSchemaOptions;
import io.vertx.json.schema.OutputFormat;
import io.vertx.json.schema.OutputUnit;
import io.vertx.json.schema.Validator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks tool arguments against the tool's closed input schema (JSON Schema 2020-12) and lists
 * every fault with a JSON Pointer and what was expected. A fault never repeats the value sent:
 * the expectation is read from the schema, not from the validator's message.
 */
public final class ArgumentValidator {

  private static final JsonSchemaOptions OPTIONS = new JsonSchemaOptions()
      .setDraft(Draft.DRAFT202012)
      .setBaseUri("https://tidemark.dev/schemas/")
      .setOutputFormat(OutputFormat.Basic);

  private final Map<String, Validator> validators = new LinkedHashMap<>();
  /** Per tool, its schema compiled into a check of the arguments that fit; absent when it could not be compiled. */
  private final Map<String, SchemaCheck> checks = new LinkedHashMap<>();
  private final Map<String, JsonObject> schemas = new LinkedHashMap<>();
  /** Per tool, the argument pointers of arrays whose items must be unique, checked here (see {@link #withoutUniqueItems}). */
  private final Map<String, List<String>> uniqueArrays = new LinkedHashMap<>();

  public static ArgumentValidator forTools(List<ToolDescriptor> tools) {
    Map<String, JsonObject> schemas = new LinkedHashMap<>();
    tools.forEach(t -> schemas.put(t.name(), t.inputSchema()));
    return new ArgumentValidator(schemas);
  }

  /** @param inputSchemas tool name to its input schema */
  public ArgumentValidator(Map<String, JsonObject> inputSchemas) {
    inputSchemas.forEach((name, schema) -> {
      List<String> unique = new java.util.ArrayList<>();
      // JsonSchema.of annotates the object it is given: hand it a copy, never the caller's own
      validators.put(name, Validator.create(JsonSchema.of(withoutUniqueItems(schema.copy(), "", unique)), OPTIONS));
      schemas.put(name, schema);
      uniqueArrays.put(name, unique);
      SchemaCheck check = SchemaCheck.compile(schema);
      if (check != null) {
        checks.put(name, check);
      }
    });
  }

  /** Every fault of {@code arguments}; empty when they fit. */
  public JsonArray faults(String tool, JsonObject arguments) {
    JsonArray faults = new JsonArray();
    // most calls fit: the compiled check vouches for them in one walk; any doubt takes the full path below
    SchemaCheck check = checks.get(tool);
    if (check != null && plain(arguments.getMap(), 0) && check.accepts(arguments)) {
      return faults;
    }
    // every part of Tidemark walks values recursively (validation, encoding, binding): a value nested
    // past any use would exhaust a thread's stack, so it is refused first, with nothing else checked
    String tooDeep = tooDeep(arguments, "", 0);
    if (tooDeep != null) {
      return faults.add(new JsonObject().put("pointer", tooDeep).put("expected", "values nested at most " + MAX_DEPTH + " levels deep"));
    }
    OutputUnit result = validators.get(tool).validate(arguments);
    for (String pointer : uniqueArrays.get(tool)) {
      if (resolve(arguments, pointer) instanceof JsonArray array && repeats(array)) {
        faults.add(new JsonObject().put("pointer", pointer).put("expected", "items that are all different (an item repeats)"));
      }
    }
    // PostgreSQL's text cannot hold U+0000, and the wire protocol ends a statement at it: a NUL
    // is the caller's mistake to fix, refused here before any service sees it
    nulFaults(arguments, "", faults);
    if (Boolean.TRUE.equals(result.getValid())) {
      return faults;
    }
    JsonObject schema = schemas.get(tool);
    List<OutputUnit> errors = result.getErrors() == null || result.getErrors().isEmpty() ? List.of(result) : result.getErrors();
    for (OutputUnit error : errors) {
      JsonObject fault = describe(schema, arguments, error);
      if (fault != null && !faults.contains(fault)) {
        faults.add(fault);
      }
    }
    if (faults.isEmpty()) {
      faults.add(new JsonObject().put("pointer", "").put("expected", "arguments that match the tool's inputSchema"));
    }
    return faults;
  }

  /**
   * The faults as one sentence for the text content, which is all that some hosts show a model:
   * each pointer and what was expected there, never the value sent.
   */
  public static String describe(JsonArray faults) {
    List<String> parts = new java.util.ArrayList<>();
    for (Object f : faults) {
      JsonObject fault = (JsonObject) f;
      String pointer = fault.getString("pointer", "");
      parts.add((parts.size() + 1) + ". at " + (pointer.isEmpty() ? "the arguments as a whole" : pointer) + ", "
          + fault.getString("expected"));
    }
    return String.join(" ", parts.stream().map(p -> p.endsWith(".") ? p : p + ".").toList());
  }

  /**
   * Takes {@code uniqueItems} off every array of strings reached through {@code properties} alone,
   * noting its argument pointer: the validator compares every pair of items, wrapping each value
   * again for each comparison, which made an events_ack of 500 ids cost more than the rest of the
   * call; {@link #repeats} does it in one pass. Arrays deeper in (under items or a $ref) keep it.
   */
  private static JsonObject withoutUniqueItems(JsonObject schema, String pointer, List<String> noted) {
    // arrays of strings only, where Java's equality is JSON's (1 and 1.0 are one number to JSON, not to Java)
    if (Boolean.TRUE.equals(schema.getValue("uniqueItems")) && "array".equals(schema.getValue("type"))
        && schema.getValue("items") instanceof JsonObject items && "string".equals(items.getValue("type"))) {
      schema.remove("uniqueItems");
      noted.add(pointer);
    }
    if (schema.getValue("properties") instanceof JsonObject props) {
      for (String name : props.fieldNames()) {
        if (props.getValue(name) instanceof JsonObject sub) {
          withoutUniqueItems(sub, pointer + "/" + escape(name), noted);
        }
      }
    }
    return schema;
  }

  /** Whether two items of {@code array} are equal, as JSON values. */
  private static boolean repeats(JsonArray array) {
    java.util.Set<Object> seen = new java.util.HashSet<>();
    for (int i = 0; i < array.size(); i++) {
      if (!seen.add(array.getValue(i))) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code value} nests no deeper than {@link #MAX_DEPTH} and holds no NUL, in a walk that builds no pointers. */
  private static boolean plain(Object value, int depth) {
    if (value instanceof String text) {
      return text.indexOf('\u0000') < 0;
    }
    if (value instanceof JsonObject object) {
      return plain(object.getMap(), depth);
    }
    if (value instanceof JsonArray array) {
      return plain(array.getList(), depth);
    }
    if (value instanceof Map<?, ?> map) {
      if (depth > MAX_DEPTH) {
        return false;
      }
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!(e.getKey() instanceof String name) || name.indexOf('\u0000') >= 0 || !plain(e.getValue(), depth + 1)) {
          return false;
        }
      }
      return true;
    }
    if (value instanceof List<?> list) {
      if (depth > MAX_DEPTH) {
        return false;
      }
      for (Object item : list) {
        if (!plain(item, depth + 1)) {
          return false;
        }
      }
    }
    return true;
  }

  /** How deep arrays and objects may nest in a tool's arguments. */
  static final int MAX_DEPTH = 32;

  /** The pointer of the first value nested deeper than {@link #MAX_DEPTH}, or null. */
  private static String tooDeep(Object value, String pointer, int depth) {
    if (!(value instanceof JsonObject) && !(value instanceof JsonArray)) {
      return null;
    }
    if (depth > MAX_DEPTH) {
      return pointer;
    }
    if (value instanceof JsonObject object) {
      for (String name : object.fieldNames()) {
        String found = tooDeep(object.getValue(name), pointer + "/" + escape(name), depth + 1);
        if (found != null) {
          return found;
        }
      }
    } else {
      JsonArray array = (JsonArray) value;
      for (int i = 0; i < array.size(); i++) {
        String found = tooDeep(array.getValue(i), pointer + "/" + i, depth + 1);
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  static final String NO_NUL = "text without NUL characters (\\u0000), which PostgreSQL cannot take; remove them, "
      + "or send binary data to a bytea column as base64";

  /** A fault for each string, and each property name, under {@code value} that holds a NUL character. */
  private static void nulFaults(Object value, String pointer, JsonArray faults) {
    if (value instanceof String text) {
      if (text.indexOf('\u0000') >= 0) {
        faults.add(new JsonObject().put("pointer", pointer).put("expected", NO_NUL));
      }
    } else if (value instanceof JsonObject object) {
      for (String name : object.fieldNames()) {
        String at = pointer + "/" + escape(name);
        if (name.indexOf('\u0000') >= 0) {
          // the pointer names the property, so it would carry the NUL: point at the object instead
          faults.add(new JsonObject().put("pointer", pointer).put("expected", "property names " + NO_NUL));
        } else {
          nulFaults(object.getValue(name), at, faults);
        }
      }
    } else if (value instanceof JsonArray array) {
      for (int i = 0; i < array.size(); i++) {
        nulFaults(array.getValue(i), pointer + "/" + i, faults);
      }
    }
  }

  private static JsonObject describe(JsonObject schema, JsonObject arguments, OutputUnit error) {
    String keywordLocation = error.getKeywordLocation() == null ? "" : error.getKeywordLocation();
    String pointer = error.getInstanceLocation() == null ? "" : error.getInstanceLocation().replaceFirst("^#", "");
    int slash = keywordLocation.lastIndexOf('/');
    String keyword = slash < 0 ? keywordLocation : keywordLocation.substring(slash + 1);
    Object subschema = resolve(schema, keywordLocation.substring(0, Math.max(slash, 0)));
    JsonObject sub = subschema instanceof JsonObject o ? o : new JsonObject();
    switch (keyword) {
      case "additionalProperties", "unevaluatedProperties": {
        // the location is the offending property; the validator also reports known properties
        // whose value failed, which their own keyword already describes
        String name = pointer.substring(pointer.lastIndexOf('/') + 1).replace("~1", "/").replace("~0", "~");
        JsonObject props = sub.getJsonObject("properties", new JsonObject());
        if (props.containsKey(name)) {
          return null;
        }
        return new JsonObject().put("pointer", pointer)
            .put("expected", "no such argument; allowed: " + (props.isEmpty() ? "none" : String.join(", ", props.fieldNames())));
      }
      case "required":
        JsonArray required = sub.getJsonArray("required", new JsonArray());
        Object at = pointer.isEmpty() ? arguments : resolve(arguments, pointer);
        if (at instanceof JsonObject obj) {
          for (Object name : required) {
            if (!obj.containsKey((String) name)) {
              return new JsonObject().put("pointer", pointer + "/" + escape((String) name)).put("expected", "a value (required)");
            }
          }
        }
        return new JsonObject().put("pointer", pointer).put("expected", "the required arguments " + required.encode());
      case "type":
        return new JsonObject().put("pointer", pointer).put("expected", "a value of type " + typeText(sub.getValue("type")));
      case "enum":
        return new JsonObject().put("pointer", pointer).put("expected", "one of " + sub.getJsonArray("enum", new JsonArray()).encode());
      case "const":
        return new JsonObject().put("pointer", pointer).put("expected", "exactly " + Json.encode(sub.getValue("const")));
      case "minLength":
        return new JsonObject().put("pointer", pointer).put("expected", "a string of at least " + sub.getValue("minLength") + " characters");
      case "maxLength":
        return new JsonObject().put("pointer", pointer).put("expected", "a string of at most " + sub.getValue("maxLength") + " characters");
      case "minimum":
        return new JsonObject().put("pointer", pointer).put("expected", "a number of at least " + sub.getValue("minimum"));
      case "maximum":
        return new JsonObject().put("pointer", pointer).put("expected", "a number of at most " + sub.getValue("maximum"));
      case "minItems":
        return new JsonObject().put("pointer", pointer).put("expected", "at least " + sub.getValue("minItems") + " items");
      case "maxItems":
        return new JsonObject().put("pointer", pointer).put("expected", "at most " + sub.getValue("maxItems") + " items");
      case "pattern":
        return new JsonObject().put("pointer", pointer).put("expected", "a string matching " + sub.getValue("pattern"));
      case "properties", "items", "allOf", "anyOf", "oneOf", "$ref", "prefixItems":
        return null; // an aggregate: its nested errors say what is wrong
      default:
        return new JsonObject().put("pointer", pointer).put("expected", "a value that satisfies '" + keyword + "' in the inputSchema");
    }
  }

  private static String typeText(Object type) {
    return type instanceof JsonArray a ? String.join(" or ", a.stream().map(String::valueOf).toList()) : String.valueOf(type);
  }

  /** Follows a JSON Pointer (RFC 6901) into a JSON value; null when it leads nowhere. */
  static Object resolve(Object root, String pointer) {
    String p = pointer.startsWith("#") ? pointer.substring(1) : pointer;
    if (p.isEmpty()) {
      return root;
    }
    Object current = root;
    for (String raw : p.substring(1).split("/", -1)) {
      String token = raw.replace("~1", "/").replace("~0", "~");
      if (current instanceof JsonObject o && "$ref".equals(token) && o.getValue("$ref") instanceof String ref && ref.startsWith("#")) {
        // a keyword location passes through a local $ref (recursive schemas such as list_rows' filter): follow it
        current = ref.equals("#") ? root : resolve(root, ref);
      } else if (current instanceof JsonObject o) {
        current = o.getValue(token);
      } else if (current instanceof JsonArray a) {
        try {
          int i = Integer.parseInt(token);
          current = i >= 0 && i < a.size() ? a.getValue(i) : null;
        } catch (NumberFormatException e) {
          return null;
        }
      } else {
        return null;
      }
    }
    return current;
  }

  private static String escape(String token) {
    return token.replace("~", "~0").replace("/", "~1");
  }

  private static final class Json {
    static String encode(Object value) {
      return io.vertx.core.json.Json.encode(value);
    }
  }
}
