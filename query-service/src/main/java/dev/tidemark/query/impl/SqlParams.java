package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.query.impl.TableCatalog.Column;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/** The values of a statement built piece by piece: each {@link #add} returns its placeholder. */
public final class SqlParams {

  private final List<Object> values = new ArrayList<>();

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
      return add(texts) + "::text[]::" + column.castType();
    }
    if ((value instanceof JsonObject || value instanceof JsonArray) && !column.castType().startsWith("json")) {
      throw fault(argument, pointer, "a string, number or boolean for column " + column.name() + " (" + column.type() + ")");
    }
    if (column.castType().equals("bytea")) {
      // bytea is read as base64 (docs/reference/types.md), so that a value read can be sent back
      return "pg_catalog.decode(" + add(PgJson.text(value)) + "::text, 'base64')";
    }
    return add(PgJson.text(value)) + "::text::" + column.castType();
  }

  /** INVALID_ARGUMENTS naming the argument, the JSON Pointer into it and what was expected there. */
  public static ToolException fault(String argument, String pointer, String expected) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "Argument " + argument + " does not fit at " + pointer + ": expected " + expected + ".",
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
