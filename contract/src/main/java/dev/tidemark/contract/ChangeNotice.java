package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/**
 * A committed data change, as gateways learn of it from the changelog topic. It names the row
 * but carries no row data: a subscriber is told what changed and reads it with its own rights.
 *
 * @param schema the table's schema
 * @param table the table's name
 * @param op {@code INSERT}, {@code UPDATE}, {@code DELETE} or {@code TRUNCATE}
 * @param key the primary key values as a JSON array in key-column order, or for a table without
 *     a primary key the whole row as an object; absent for {@code TRUNCATE}
 * @param position the change's opaque position: a {@code changes_since} cursor just past it
 */
public record ChangeNotice(String schema, String table, String op, Object key, String position) {

  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("schema", schema).put("table", table).put("op", op).put("position", position);
    if (key != null) {
      json.put("key", key);
    }
    return json;
  }

  /** Reads a notice; unknown fields are ignored, a missing required field is an error. */
  public static ChangeNotice fromJson(JsonObject json) {
    return new ChangeNotice(required(json, "schema"), required(json, "table"), required(json, "op"),
        json.getValue("key"), required(json, "position"));
  }

  static String required(JsonObject json, String field) {
    Object value = json.getValue(field);
    if (!(value instanceof String s)) {
      throw new IllegalArgumentException("field " + field + " must be a string");
    }
    return s;
  }
}
