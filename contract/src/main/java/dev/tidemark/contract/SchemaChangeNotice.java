package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/**
 * A committed schema change (DDL) on a served schema: the list of tables or their shape changed.
 *
 * @param schema the schema of the changed object
 * @param object the object's name
 * @param command what was done, such as {@code CREATE TABLE}, {@code ALTER TABLE} or {@code DROP}
 * @param position the change's opaque position
 */
public record SchemaChangeNotice(String schema, String object, String command, String position) {

  public JsonObject toJson() {
    return new JsonObject().put("schema", schema).put("object", object).put("command", command).put("position", position);
  }

  public static SchemaChangeNotice fromJson(JsonObject json) {
    return new SchemaChangeNotice(ChangeNotice.required(json, "schema"), ChangeNotice.required(json, "object"),
        ChangeNotice.required(json, "command"), ChangeNotice.required(json, "position"));
  }
}
