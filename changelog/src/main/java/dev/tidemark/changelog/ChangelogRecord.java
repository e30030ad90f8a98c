package dev.tidemark.changelog;

import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.SchemaChangeNotice;
import io.vertx.core.json.JsonObject;

/**
 * The value of one record on a database's changelog topic (JSON). Its Kafka key is
 * {@code schema.table} followed by the change's key, so that every change to one row lands on
 * one partition, in order. Consumers drop a record whose position is not after the last one
 * they took from that partition: a relay that restarts may publish a few records again.
 */
public record ChangelogRecord(ChangePosition position, String cursor, JsonObject body) {

  public static final String OP_DDL = "DDL";

  public String schema() {
    return body.getString("schema");
  }

  public String table() {
    return body.getString("table");
  }

  public String op() {
    return body.getString("op");
  }

  public boolean isDdl() {
    return OP_DDL.equals(op());
  }

  public String kafkaKey() {
    return kafkaKey(schema(), table(), body.getValue("key"));
  }

  /** The Kafka key of a change to {@code schema.table} whose key is {@code key} (null for a truncation or a schema change). */
  public static String kafkaKey(String schema, String table, Object key) {
    return schema + "." + table + (key == null ? "" : ":" + io.vertx.core.json.Json.encode(key));
  }

  public JsonObject toJson() {
    return body.copy()
        .put("position", new JsonObject().put("commit", position.commit()).put("change", position.change()))
        .put("cursor", cursor);
  }

  public static ChangelogRecord fromJson(JsonObject json) {
    JsonObject p = json.getJsonObject("position");
    ChangePosition position = new ChangePosition(p.getLong("commit"), p.getLong("change"));
    JsonObject body = json.copy();
    body.remove("position");
    String cursor = (String) body.remove("cursor");
    return new ChangelogRecord(position, cursor, body);
  }

  public ChangeNotice toNotice() {
    return new ChangeNotice(schema(), table(), op(), body.getValue("key"), cursor);
  }

  public SchemaChangeNotice toSchemaNotice() {
    JsonObject after = body.getJsonObject("after", new JsonObject());
    return new SchemaChangeNotice(schema(), table(), after.getString("command", "DDL"), cursor);
  }
}
