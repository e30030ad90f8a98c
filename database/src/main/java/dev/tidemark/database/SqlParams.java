package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.TableCatalog.Column;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/** The values of a statement built piece by piece: each {@link #add} returns its placeholder. */
public final class SqlParams {

  private final List<Object> values = new ArrayList<>();
  private final List<Bound> bound = new ArrayList<>();

  /**
   * A caller's value bound for a column: where it came from, so that a value PostgreSQL refuses
   * can be blamed on its own argument and JSON Pointer (see {@link ValueFaults}).
   */
  public record Bound(int index, String argument, String pointer, Column column, boolean array) {}

  /** Binds {@code value} and returns its placeholder, $1, $2, ... */
  public String add(Object value) {
    values.add(value);
    return "$" + values.size();
  }

  /**
   * Binds a JSON value for {@code column} and returns the placeholder cast to the column's type:
   * the value's text form (an array's items each), so PostgreSQL converts it as it would a literal.
   * An object or array for a column that is not JSON is INVALID_ARGUMENTS at {@code pointer}.
   */
  public String addFor(Object value, Column column, String argument, String pointer) {
    if (column.isArray() && value instanceof JsonArray a) {
      String[] texts = new String[a.size()];
      for (int i = 0; i < a.size(); i++) {
        Object v = a.getValue(i);
        texts[i] = v == null ? null : PgJson.text(v);
      }
      return record(add(texts), argument, pointer, column, true) + "::text[]::" + column.castType();
    }
    if ((value instanceof JsonObject || value instanceof JsonArray) && !column.castType().startsWith("json")) {
      throw fault(argument, pointer, "a string, number or boolean for column " + column.name() + " (" + column.type() + ")");
    }
    if (column.castType().equals("bytea")) {
      // bytea is read as base64 (docs/reference/types.md), so that a value read can be sent back
      return "pg_catalog.decode(" + record(add(PgJson.text(value)), argument, pointer, column, false) + "::text, 'base64')";
    }
    return record(add(PgJson.text(value)), argument, pointer, column, false) + "::text::" + column.castType();
  }

  /** Binds the text form of a scalar for {@code column} (a key value) and returns the placeholder cast to the column's type. */
  public String addScalar(Object value, Column column, String argument, String pointer) {
    return record(add(PgJson.text(value)), argument, pointer, column, false) + "::text::" + column.castType();
  }

  /** Binds several scalars for {@code column} (an {@code in} list) as one array and returns it cast to an array of the column's type. */
  public String addList(String[] texts, Column column, String argument, String pointer) {
    return record(add(texts), argument, pointer, column, true) + "::text[]::" + column.castType() + "[]";
  }

  private String record(String placeholder, String argument, String pointer, Column column, boolean array) {
    bound.add(new Bound(values.size(), argument, pointer, column, array));
    return placeholder;
  }

  /** The caller's values bound for columns, in the order they were bound. */
  public List<Bound> bound() {
    return List.copyOf(bound);
  }

  /** The value bound at {@code index} (1-based, as its placeholder). */
  public Object value(int index) {
    return values.get(index - 1);
  }

  /** INVALID_ARGUMENTS naming the argument, the JSON Pointer into it and what was expected there. */
  public static ToolException fault(String argument, String pointer, String expected) {
    return fault(argument, pointer, expected, "");
  }

  /** Like {@link #fault(String, String, String)}, with {@code why} (a sentence) after the fault. */
  public static ToolException fault(String argument, String pointer, String expected, String why) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "Argument " + argument + " does not fit at " + pointer + ": expected " + expected + "."
        + (why.isEmpty() ? "" : " " + why),
        new JsonObject().put("argument", argument)
            .put("faults", new JsonArray().add(new JsonObject().put("pointer", pointer).put("expected", expected))));
  }

  public List<Object> values() {
    return List.copyOf(values);
  }

  public Tuple tuple() {
    Tuple t = Tuple.tuple();
    values.forEach(t::addValue);
    return t;
  }
}
