package dev.tidemark.gateway.impl.tool;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A tool's input schema compiled once into a check that asks of a value only what the schema
 * names, for the arguments that fit: the general validator reads every keyword it knows from each
 * schema object on every call, which cost a {@code get_row} more than the rest of its check.
 *
 * <p>It only ever answers whether it is sure the value fits. A value it cannot vouch for (one that
 * breaks the schema, or a number or a type it does not decide alone) goes to the general validator,
 * which stays the judge of the JSON Schema and the source of every fault. A schema with a keyword
 * this class does not know is not compiled at all ({@link #compile} returns null), so a check can
 * never accept what the schema refuses.
 */
final class SchemaCheck {

  /** Keywords that assert nothing (annotations): a schema may carry them and still be compiled. */
  private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default", "examples", "$comment",
      "deprecated", "readOnly", "writeOnly", "$defs");
  private static final Set<String> ASSERTIONS = Set.of("type", "enum", "const", "minLength", "maxLength", "pattern",
      "minimum", "maximum", "minItems", "maxItems", "uniqueItems", "items", "properties", "additionalProperties",
      "required", "minProperties", "maxProperties", "$ref");

  private static final int OBJECT = 1, ARRAY = 2, STRING = 4, NUMBER = 8, INTEGER = 16, BOOLEAN = 32, NULL = 64;
  /** Above this, a long is not exactly a double: such numbers go to the general validator. */
  private static final long EXACT = 1L << 53;

  private final Node root;

  private SchemaCheck(Node root) {
    this.root = root;
  }

  /** The compiled check of {@code schema}, or null when it holds a keyword or a form this class does not decide. */
  static SchemaCheck compile(JsonObject schema) {
    try {
      return new SchemaCheck(new Compiler(schema).node(schema));
    } catch (Unsupported e) {
      return null;
    }
  }

  /** True when {@code value} certainly fits the schema; false when it may not (the general validator then decides). */
  boolean accepts(Object value) {
    return root.accepts(value);
  }

  private static final class Unsupported extends RuntimeException {
    Unsupported() {
      super(null, null, false, false);
    }
  }

  private static final class Compiler {
    private final JsonObject root;
    private final Map<String, Ref> refs = new HashMap<>();

    Compiler(JsonObject root) {
      this.root = root;
    }

    Node node(Object schema) {
      if (Boolean.TRUE.equals(schema)) {
        return Node.ANY;
      }
      if (Boolean.FALSE.equals(schema)) {
        return Node.NONE;
      }
      if (!(schema instanceof JsonObject s)) {
        throw new Unsupported();
      }
      for (String keyword : s.fieldNames()) {
        if (!ASSERTIONS.contains(keyword) && !ANNOTATIONS.contains(keyword)) {
          throw new Unsupported();
        }
      }
      Node n = new Node();
      Object type = s.getValue("type");
      if (type != null) {
        n.types = type instanceof JsonArray a ? a.stream().mapToInt(Compiler::type).reduce(0, (x, y) -> x | y) : type(type);
      }
      if (s.containsKey("enum") && s.containsKey("const")) {
        throw new Unsupported();
      }
      if (s.containsKey("enum")) {
        n.choices = scalars(s.getValue("enum") instanceof JsonArray a ? a.getList() : null);
      }
      if (s.containsKey("const")) {
        n.choices = scalars(java.util.Collections.singletonList(s.getValue("const")));
      }
      n.minLength = count(s, "minLength");
      n.maxLength = count(s, "maxLength");
      if (s.containsKey("pattern")) {
        n.pattern = s.getValue("pattern") instanceof String p ? Pattern.compile(p) : unsupported();
      }
      n.minimum = bound(s, "minimum");
      n.maximum = bound(s, "maximum");
      n.minItems = count(s, "minItems");
      n.maxItems = count(s, "maxItems");
      n.minProperties = count(s, "minProperties");
      n.maxProperties = count(s, "maxProperties");
      if (s.containsKey("uniqueItems")) {
        n.uniqueItems = s.getValue("uniqueItems") instanceof Boolean b ? b : unsupported();
      }
      if (s.containsKey("items")) {
        n.items = node(s.getValue("items"));
      }
      if (s.containsKey("properties")) {
        if (!(s.getValue("properties") instanceof JsonObject props)) {
          throw new Unsupported();
        }
        n.properties = new HashMap<>();
        for (String name : props.fieldNames()) {
          n.properties.put(name, node(props.getValue(name)));
        }
      }
      if (s.containsKey("additionalProperties")) {
        n.additional = node(s.getValue("additionalProperties"));
      }
      if (s.containsKey("required")) {
        if (!(s.getValue("required") instanceof JsonArray required)) {
          throw new Unsupported();
        }
        List<String> names = new ArrayList<>();
        for (Object name : required) {
          names.add(name instanceof String text ? text : unsupported());
        }
        n.required = names.toArray(String[]::new);
      }
      if (s.containsKey("$ref")) {
        n.ref = ref(s.getValue("$ref"));
      }
      return n;
    }

    /** A local reference, compiled once however often it is named, so that recursive schemas end. */
    private Ref ref(Object target) {
      if (!(target instanceof String pointer) || !pointer.startsWith("#")) {
        throw new Unsupported();
      }
      Ref known = refs.get(pointer);
      if (known != null) {
        return known;
      }
      Ref ref = new Ref();
      refs.put(pointer, ref);
      Object schema = ArgumentValidator.resolve(root, pointer);
      if (schema == null) {
        throw new Unsupported();
      }
      ref.target = node(schema);
      return ref;
    }

    private static int type(Object name) {
      return switch (String.valueOf(name)) {
        case "object" -> OBJECT;
        case "array" -> ARRAY;
        case "string" -> STRING;
        case "number" -> NUMBER | INTEGER;
        case "integer" -> INTEGER;
        case "boolean" -> BOOLEAN;
        case "null" -> NULL;
        default -> unsupported();
      };
    }

    /** Strings and booleans only, which Java compares as JSON does; other choices go to the general validator. */
    private static Set<Object> scalars(List<?> values) {
      if (values == null) {
        throw new Unsupported();
      }
      Set<Object> choices = new HashSet<>();
      for (Object v : values) {
        if (v instanceof String || v instanceof Boolean) {
          choices.add(v);
        }
      }
      return choices;
    }

    private static int count(JsonObject s, String keyword) {
      Object v = s.getValue(keyword);
      if (v == null) {
        return -1;
      }
      if ((v instanceof Integer || v instanceof Long) && ((Number) v).longValue() >= 0 && ((Number) v).longValue() <= Integer.MAX_VALUE) {
        return ((Number) v).intValue();
      }
      return unsupported();
    }

    private static Number bound(JsonObject s, String keyword) {
      Object v = s.getValue(keyword);
      if (v == null) {
        return null;
      }
      if (v instanceof Integer || v instanceof Long) {
        return Math.abs(((Number) v).longValue()) < EXACT ? (Number) v : unsupported();
      }
      if (v instanceof Double d && Double.isFinite(d)) {
        return d;
      }
      return unsupported();
    }

    private static <T> T unsupported() {
      throw new Unsupported();
    }
  }

  private static final class Ref {
    Node target;
  }

  /** One schema object: each field is one keyword, absent (null or -1) when the schema does not name it. */
  private static class Node {
    static final Node ANY = new Node();
    static final Node NONE = new Node() {
      @Override
      boolean accepts(Object value) {
        return false;
      }
    };

    int types;
    Set<Object> choices;
    int minLength = -1, maxLength = -1, minItems = -1, maxItems = -1, minProperties = -1, maxProperties = -1;
    Pattern pattern;
    Number minimum, maximum;
    boolean uniqueItems;
    Node items;
    Map<String, Node> properties;
    Node additional;
    String[] required;
    Ref ref;

    boolean accepts(Object value) {
      int type = typeOf(value);
      if (type == 0 || (types != 0 && (types & type) == 0)) {
        return false;
      }
      if (choices != null && !choices.contains(value)) {
        return false;
      }
      if (ref != null && !ref.target.accepts(value)) {
        return false;
      }
      return switch (type) {
        case STRING -> text((String) value);
        case INTEGER, NUMBER -> number((Number) value, type);
        case OBJECT -> object(value instanceof JsonObject o ? o.getMap() : asMap(value));
        case ARRAY -> array(value instanceof JsonArray a ? a.getList() : (List<?>) value);
        default -> true;
      };
    }

    private boolean text(String text) {
      if (minLength >= 0 || maxLength >= 0) {
        // the general validator counts code points; both counts must fit, or it decides
        int units = text.length();
        int points = units > 0 && hasSurrogate(text) ? text.codePointCount(0, units) : units;
        if (!within(units, minLength, maxLength) || !within(points, minLength, maxLength)) {
          return false;
        }
      }
      return pattern == null || pattern.matcher(text).find();
    }

    private boolean number(Number n, int type) {
      if (minimum == null && maximum == null) {
        return true;
      }
      if (type == INTEGER && Math.abs(n.longValue()) >= EXACT) {
        return false;
      }
      double v = n.doubleValue();
      return (minimum == null || v >= minimum.doubleValue()) && (maximum == null || v <= maximum.doubleValue());
    }

    private boolean object(Map<String, Object> map) {
      if (!within(map.size(), minProperties, maxProperties)) {
        return false;
      }
      if (required != null) {
        for (String name : required) {
          if (!map.containsKey(name)) {
            return false;
          }
        }
      }
      if (properties == null && additional == null) {
        return true;
      }
      for (Map.Entry<String, Object> e : map.entrySet()) {
        Node sub = properties == null ? null : properties.get(e.getKey());
        if (sub == null) {
          sub = additional;
        }
        if (sub != null && !sub.accepts(e.getValue())) {
          return false;
        }
      }
      return true;
    }

    private boolean array(List<?> list) {
      int size = list.size();
      if (!within(size, minItems, maxItems)) {
        return false;
      }
      if (items != null) {
        for (Object item : list) {
          if (!items.accepts(item)) {
            return false;
          }
        }
      }
      if (uniqueItems && size > 1) {
        // strings only, where Java's equality is JSON's
        Set<Object> seen = new HashSet<>();
        for (Object item : list) {
          if (!(item instanceof String) || !seen.add(item)) {
            return false;
          }
        }
      }
      return true;
    }

    /** Whether a count lies within bounds, each -1 when the schema does not name it. */
    private static boolean within(int count, int min, int max) {
      return (min < 0 || count >= min) && (max < 0 || count <= max);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object value) {
      return (Map<String, Object>) value;
    }

    private static boolean hasSurrogate(String text) {
      for (int i = 0; i < text.length(); i++) {
        if (Character.isSurrogate(text.charAt(i))) {
          return true;
        }
      }
      return false;
    }

    /** The JSON type of a value as this class decides it alone; 0 for what it leaves to the general validator. */
    private static int typeOf(Object value) {
      if (value instanceof String) {
        return STRING;
      }
      if (value instanceof Integer || value instanceof Long) {
        return INTEGER;
      }
      if (value instanceof Double d) {
        // a whole double is an integer to JSON Schema; leave that case to the general validator
        return Double.isFinite(d) && d != Math.rint(d) ? NUMBER : 0;
      }
      if (value instanceof Boolean) {
        return BOOLEAN;
      }
      if (value == null) {
        return NULL;
      }
      if (value instanceof JsonObject || value instanceof Map) {
        return OBJECT;
      }
      if (value instanceof JsonArray || value instanceof List) {
        return ARRAY;
      }
      return 0;
    }
  }
}
