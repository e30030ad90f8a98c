package dev.tidemark.contract;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/**
 * The types a named tool's parameter or column may declare: the PostgreSQL types Tidemark maps to
 * JSON (docs/reference/types.md), under their usual spellings, and arrays of them. A type decides
 * the parameter's JSON Schema and which placeholder types PostgreSQL may infer for it.
 */
public final class NamedTypes {

  /** Each accepted spelling and the name PostgreSQL's format_type gives it. */
  private static final Map<String, String> CANONICAL = Map.ofEntries(
      Map.entry("text", "text"), Map.entry("varchar", "character varying"), Map.entry("character varying", "character varying"),
      Map.entry("smallint", "smallint"), Map.entry("int2", "smallint"),
      Map.entry("integer", "integer"), Map.entry("int", "integer"), Map.entry("int4", "integer"),
      Map.entry("bigint", "bigint"), Map.entry("int8", "bigint"),
      Map.entry("numeric", "numeric"), Map.entry("decimal", "numeric"),
      Map.entry("real", "real"), Map.entry("float4", "real"),
      Map.entry("double precision", "double precision"), Map.entry("float8", "double precision"),
      Map.entry("boolean", "boolean"), Map.entry("bool", "boolean"),
      Map.entry("uuid", "uuid"), Map.entry("date", "date"),
      Map.entry("timestamp", "timestamp without time zone"), Map.entry("timestamp without time zone", "timestamp without time zone"),
      Map.entry("timestamptz", "timestamp with time zone"), Map.entry("timestamp with time zone", "timestamp with time zone"),
      Map.entry("time", "time without time zone"), Map.entry("time without time zone", "time without time zone"),
      Map.entry("json", "json"), Map.entry("jsonb", "jsonb"), Map.entry("bytea", "bytea"));

  /** The spellings the docs list, in the message of an unknown type. */
  static final List<String> NAMES = List.of("text", "varchar", "smallint", "integer", "bigint", "numeric", "real", "double precision",
      "boolean", "uuid", "date", "timestamp", "timestamptz", "time", "json", "jsonb", "bytea", "and any of these followed by []");

  private NamedTypes() {}

  /** The format_type name of {@code declared}, or null when Tidemark does not map it. */
  public static String canonical(String declared) {
    String t = declared.trim().toLowerCase(java.util.Locale.ROOT).replaceAll("\\s+", " ");
    if (t.endsWith("[]")) {
      String element = canonical(t.substring(0, t.length() - 2));
      return element == null || element.endsWith("[]") ? null : element + "[]";
    }
    return CANONICAL.get(t);
  }

  /** The JSON type a value of {@code canonical} takes; null for json and jsonb, which take any. */
  static String jsonType(String canonical) {
    if (canonical.endsWith("[]")) {
      return "array";
    }
    return switch (canonical) {
      case "smallint", "integer", "bigint" -> "integer";
      case "numeric", "real", "double precision" -> "number";
      case "boolean" -> "boolean";
      case "json", "jsonb" -> null;
      default -> "string";
    };
  }

  /** The parameter's JSON Schema, before its limits. */
  static JsonObject inputSchema(String canonical) {
    if (canonical.endsWith("[]")) {
      return new JsonObject().put("type", "array").put("items", inputSchema(canonical.substring(0, canonical.length() - 2)));
    }
    String type = jsonType(canonical);
    JsonObject schema = type == null ? new JsonObject() : new JsonObject().put("type", type);
    String format = switch (canonical) {
      case "uuid" -> "uuid";
      case "date" -> "date";
      case "timestamp with time zone" -> "date-time";
      case "time without time zone" -> "time";
      default -> null;
    };
    if (format != null) {
      schema.put("format", format);
    }
    if (canonical.equals("bytea")) {
      schema.put("contentEncoding", "base64");
    }
    return schema;
  }

  /** A declared column's schema in the result: numeric is a string there, as every result writes it. */
  static JsonObject resultSchema(String canonical) {
    if (canonical.endsWith("[]")) {
      return new JsonObject().put("type", new JsonArray().add("array").add("null"));
    }
    String type = canonical.equals("numeric") ? "string" : jsonType(canonical);
    return type == null ? new JsonObject() : new JsonObject().put("type", new JsonArray().add(type).add("null"));
  }

  /** Whether {@code value} is of JSON type {@code jsonType} (null: any). */
  static boolean fits(String jsonType, Object value) {
    if (jsonType == null) {
      return true;
    }
    return switch (jsonType) {
      case "integer" -> value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue());
      case "number" -> value instanceof Number;
      case "boolean" -> value instanceof Boolean;
      case "array" -> value instanceof JsonArray;
      default -> value instanceof String;
    };
  }

  /**
   * Whether a value of {@code declared} (canonical) binds to a placeholder PostgreSQL typed
   * {@code inferred} (format_type): the numbers to any number type (a whole number to a whole
   * one), text to any type PostgreSQL reads from text (text, varchar, char, an enum, a domain over
   * text...), and every other type to itself alone.
   */
  public static boolean binds(String declared, String inferred) {
    if (declared.endsWith("[]") || inferred.endsWith("[]")) {
      return declared.endsWith("[]") && inferred.endsWith("[]")
          && binds(declared.substring(0, declared.length() - 2), inferred.substring(0, inferred.length() - 2));
    }
    if (declared.equals(inferred)) {
      return true;
    }
    String d = jsonType(declared);
    return switch (inferred) {
      case "smallint", "integer", "bigint" -> "integer".equals(d);
      case "numeric", "real", "double precision" -> "integer".equals(d) || "number".equals(d);
      case "json", "jsonb" -> d == null;
      case "boolean", "uuid", "date", "timestamp without time zone", "timestamp with time zone", "time without time zone",
           "time with time zone", "bytea", "interval" -> false;
      // text, varchar, char, name, enums and every type without a mapping of its own are read from text
      default -> declared.equals("text") || declared.equals("character varying");
    };
  }
}
