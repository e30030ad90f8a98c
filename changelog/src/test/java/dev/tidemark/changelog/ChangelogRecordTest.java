package dev.tidemark.changelog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tidemark.contract.ChangePosition;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ChangelogRecordTest {

  private static ChangelogRecord record(String op, Object key, JsonObject after) {
    JsonObject body = new JsonObject().put("schema", "public").put("table", "orders").put("op", op)
        .put("committed_at", "2026-12-03T10:00:00Z").put("transaction", "771").put("caller", "it-writer");
    if (key != null) {
      body.put("key", key);
    }
    body.put("before", new JsonObject().put("id", 7).put("note", "old \"quoted\" ☃")).put("after", after);
    return new ChangelogRecord(new ChangePosition(123_456L, 9L), "cursor-of-9", body);
  }

  @Test
  void aRecordReadWithoutImagesGivesTheNoticeTheWholeRecordGives() {
    ChangelogRecord whole = record("UPDATE", new JsonArray().add(7), new JsonObject().put("id", 7).put("note", "new"));
    ChangelogRecord light = ChangelogRecord.withoutImages(whole.toJson().encode());
    assertEquals(whole.position(), light.position());
    assertEquals(whole.cursor(), light.cursor());
    assertEquals(whole.toNotice(), light.toNotice());
    assertEquals(whole.kafkaKey(), light.kafkaKey());
    assertFalse(light.body().containsKey("before"));
    assertFalse(light.body().containsKey("after"));
    assertEquals("it-writer", light.body().getString("caller"));
  }

  @Test
  void aSchemaChangeKeepsItsCommandWhereverItsOpStands() {
    JsonObject ddl = new JsonObject().put("command", "ALTER TABLE").put("object", "public.orders");
    ChangelogRecord whole = record(ChangelogRecord.OP_DDL, null, ddl);
    assertEquals(whole.toSchemaNotice(), ChangelogRecord.withoutImages(whole.toJson().encode()).toSchemaNotice());
    // the op after the image: the image is read, then kept only for a schema change
    String afterFirst = "{\"after\":" + ddl.encode() + ",\"schema\":\"public\",\"table\":\"orders\",\"op\":\"DDL\","
        + "\"position\":{\"commit\":5,\"change\":1},\"cursor\":\"c\"}";
    assertEquals("ALTER TABLE", ChangelogRecord.withoutImages(afterFirst).toSchemaNotice().command());
    String dataAfterFirst = afterFirst.replace("\"DDL\"", "\"INSERT\"");
    assertFalse(ChangelogRecord.withoutImages(dataAfterFirst).body().containsKey("after"));
  }

  @Test
  void aRecordThatIsNotAnObjectOrNamesNoPositionIsRefused() {
    assertThrows(DecodeException.class, () -> ChangelogRecord.withoutImages("[1, 2]"));
    assertThrows(DecodeException.class, () -> ChangelogRecord.withoutImages("{\"schema\": \"public\""));
    assertThrows(DecodeException.class, () -> ChangelogRecord.withoutImages("{\"schema\": \"public\", \"op\": \"INSERT\"}"));
  }
}
