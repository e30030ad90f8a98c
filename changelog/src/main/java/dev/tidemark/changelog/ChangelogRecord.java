package dev.tidemark.changelog;

import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.SchemaChangeNotice;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.jackson.DatabindCodec;
import java.io.IOException;
import java.util.List;
import java.util.Map;

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

  /**
   * A record's value read for what a notice needs, with Jackson's streaming parser: the row
   * images, most of a record, are skipped unread (a schema change's {@code after}, which names its
   * command, is kept). The body holds every other field.
   */
  @SuppressWarnings("unchecked")
  public static ChangelogRecord withoutImages(String value) {
    JsonObject body = new JsonObject();
    Long commit = null;
    Long change = null;
    String cursor = null;
    try (JsonParser p = DatabindCodec.mapper().getFactory().createParser(value)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        throw new DecodeException("a changelog record is a JSON object");
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        switch (field) {
          case "before" -> p.skipChildren();
          case "after" -> {
            if (OP_DDL.equals(body.getString("op")) || !body.containsKey("op")) {
              body.put(field, wrap(p.readValueAs(Object.class)));
            } else {
              p.skipChildren();
            }
          }
          case "position" -> {
            JsonObject position = new JsonObject((Map<String, Object>) p.readValueAs(Map.class));
            commit = position.getLong("commit");
            change = position.getLong("change");
          }
          case "cursor" -> cursor = p.getValueAsString();
          default -> body.put(field, wrap(p.readValueAs(Object.class)));
        }
      }
    } catch (IOException e) {
      throw new DecodeException("a changelog record is not JSON: " + e.getMessage());
    }
    if (commit == null || change == null) {
      throw new DecodeException("a changelog record names no position");
    }
    if (!OP_DDL.equals(body.getString("op"))) {
      body.remove("after");  // read before its op was: a data change's image is not kept either
    }
    return new ChangelogRecord(new ChangePosition(commit, change), cursor, body);
  }

  @SuppressWarnings("unchecked")
  private static Object wrap(Object v) {
    if (v instanceof Map<?, ?> m) {
      return new JsonObject((Map<String, Object>) m);
    }
    if (v instanceof List<?> l) {
      return new JsonArray((List<Object>) l);
    }
    return v;
  }

  public ChangeNotice toNotice() {
    return new ChangeNotice(schema(), table(), op(), body.getValue("key"), cursor);
  }

  public SchemaChangeNotice toSchemaNotice() {
    JsonObject after = body.getJsonObject("after", new JsonObject());
    return new SchemaChangeNotice(schema(), table(), after.getString("command", "DDL"), cursor);
  }
}
