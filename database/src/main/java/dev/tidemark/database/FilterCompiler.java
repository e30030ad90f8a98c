package dev.tidemark.database;

import dev.tidemark.contract.ToolException;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Compiles {@code list_rows}' structured filter to a parameterised SQL condition. Column names are
 * checked against the catalog and double-quoted; every value is bound as a parameter in its text
 * form and cast to the column's type, so no value ever becomes SQL text.
 */
public final class FilterCompiler {

  /** The most values an {@code in} condition takes. */
  public static final int MAX_IN_VALUES = 1000;
  /** The deepest nesting of and/or/not. */
  public static final int MAX_DEPTH = 16;

  private static final Set<String> COMBINERS = Set.of("and", "or", "not");
  private static final Set<String> FIELDS = Set.of("column", "op", "value", "and", "or", "not");

  private FilterCompiler() {}

  /** The condition for {@code where}, binding its values into {@code params}; "TRUE" when there is none. */
  public static String compile(JsonObject where, Table table, SqlParams params) {
    return where == null ? "TRUE" : filter(where, "/where", table, params, 0);
  }

  /** The column names {@code where} names (unchecked: {@link #compile} checks them). */
  public static Set<String> columns(JsonObject where) {
    Set<String> out = new java.util.LinkedHashSet<>();
    collect(where, out, 0);
    return out;
  }

  private static void collect(Object f, Set<String> out, int depth) {
    if (depth > MAX_DEPTH) {
      return;
    }
    if (f instanceof JsonObject o) {
      if (o.getValue("column") instanceof String c) {
        out.add(c);
      }
      COMBINERS.forEach(k -> collect(o.getValue(k), out, depth + 1));
    } else if (f instanceof JsonArray a) {
      a.forEach(v -> collect(v, out, depth + 1));
    }
  }

  private static String filter(JsonObject f, String pointer, Table table, SqlParams params, int depth) {
    if (depth > MAX_DEPTH) {
      throw fault(pointer, "filters nested at most " + MAX_DEPTH + " deep");
    }
    for (String field : f.fieldNames()) {
      if (!FIELDS.contains(field)) {
        // watch's schema leaves the filter's inside to this check
        throw fault(pointer, "only the fields column, op, value, and, or, not");
      }
    }
    List<String> combiners = f.fieldNames().stream().filter(COMBINERS::contains).toList();
    boolean condition = f.containsKey("column") || f.containsKey("op") || f.containsKey("value");
    if (combiners.size() + (condition ? 1 : 0) != 1) {
      throw fault(pointer, "exactly one of: a condition {column, op, value}, {and: [...]}, {or: [...]}, {not: {...}}");
    }
    if (condition) {
      return condition(f, pointer, table, params);
    }
    String combiner = combiners.get(0);
    if (combiner.equals("not")) {
      Object inner = f.getValue("not");
      if (!(inner instanceof JsonObject o)) {
        throw fault(pointer + "/not", "a filter object");
      }
      return "NOT (" + filter(o, pointer + "/not", table, params, depth + 1) + ")";
    }
    Object list = f.getValue(combiner);
    if (!(list instanceof JsonArray items) || items.isEmpty()) {
      throw fault(pointer + "/" + combiner, "a non-empty array of filters");
    }
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      if (!(items.getValue(i) instanceof JsonObject o)) {
        throw fault(pointer + "/" + combiner + "/" + i, "a filter object");
      }
      parts.add("(" + filter(o, pointer + "/" + combiner + "/" + i, table, params, depth + 1) + ")");
    }
    return String.join(combiner.equals("and") ? " AND " : " OR ", parts);
  }

  private static String condition(JsonObject f, String pointer, Table table, SqlParams params) {
    if (!(f.getValue("column") instanceof String name)) {
      throw fault(pointer + "/column", "a column name");
    }
    if (!(f.getValue("op") instanceof String op)) {
      throw fault(pointer + "/op", "one of eq, ne, lt, lte, gt, gte, in, like, ilike, is_null");
    }
    Column column = table.column(name, "where");
    String col = SqlText.quoteIdent(column.name());
    Object value = f.getValue("value");
    switch (op) {
      case "is_null": {
        if (!(value instanceof Boolean b)) {
          throw fault(pointer + "/value", "true (IS NULL) or false (IS NOT NULL)");
        }
        return col + (b ? " IS NULL" : " IS NOT NULL");
      }
      case "like", "ilike": {
        if (!(value instanceof String s)) {
          throw fault(pointer + "/value", "a string pattern (% any text, _ one character)");
        }
        return col + "::text " + (op.equals("like") ? "LIKE " : "ILIKE ") + params.add(s) + "::text";
      }
      case "in": {
        if (!(value instanceof JsonArray values) || values.isEmpty() || values.size() > MAX_IN_VALUES) {
          throw fault(pointer + "/value", "an array of 1 to " + MAX_IN_VALUES + " values");
        }
        if (column.isArray()) {
          throw fault(pointer + "/op", "eq or ne: 'in' does not apply to the array column " + column.name());
        }
        String[] texts = new String[values.size()];
        for (int i = 0; i < values.size(); i++) {
          Object v = values.getValue(i);
          if (v == null || v instanceof JsonObject || v instanceof JsonArray) {
            throw fault(pointer + "/value/" + i, "a string, number or boolean");
          }
          texts[i] = PgJson.text(v);
        }
        return col + " = ANY(" + params.addList(texts, column, "where", pointer + "/value") + ")";
      }
      case "eq", "ne", "lt", "lte", "gt", "gte": {
        if (value == null) {
          throw fault(pointer + "/value", "a value (use op is_null to test for NULL)");
        }
        String operator = switch (op) {
          case "eq" -> " = ";
          case "ne" -> " IS DISTINCT FROM ";
          case "lt" -> " < ";
          case "lte" -> " <= ";
          case "gt" -> " > ";
          default -> " >= ";
        };
        return col + operator + params.addFor(value, column, "where", pointer + "/value");
      }
      default:
        throw fault(pointer + "/op", "one of eq, ne, lt, lte, gt, gte, in, like, ilike, is_null");
    }
  }

  private static ToolException fault(String pointer, String expected) {
    return SqlParams.fault("where", pointer, expected);
  }
}
