package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class WriteGuardTest {

  @Test
  void transactionControlIsRecognisedBehindCommentsAndInAnyCase() {
    for (String sql : List.of("COMMIT", "begin", "Begin Transaction", "ROLLBACK TO SAVEPOINT a", "savepoint a", "release a",
        "END", "abort", "start transaction", "  -- note\n COMMIT", "/* why */ rollback;", "PREPARE TRANSACTION 'x'",
        "commit prepared 'x'")) {
      assertTrue(WriteGuard.isTransactionControl(sql), sql);
    }
  }

  @Test
  void otherStatementsAreNotTransactionControl() {
    for (String sql : List.of("SET ROLE NONE", "DELETE FROM commits", "begins", "prepare p AS SELECT 1", "DO $$ BEGIN END $$",
        "/* commit */ UPDATE t SET a = 1")) {
      assertFalse(WriteGuard.isTransactionControl(sql), sql);
    }
  }

  @Test
  void aPlainInsertIsOneInsertOfItsOwnValuesWithoutConflictHandling() {
    assertEquals(new ShownInserts.Target("public", "t"), WriteGuard.plainInsert(plans(insert(child("Result")))));
    assertEquals(new ShownInserts.Target("public", "t"), WriteGuard.plainInsert(plans(insert(child("Values Scan")))));
    // rows read from a table, a subquery in VALUES, ON CONFLICT, a rule's second statement, an UPDATE: not plain
    assertNull(WriteGuard.plainInsert(plans(insert(child("Seq Scan")))));
    assertNull(WriteGuard.plainInsert(plans(insert(child("Result").put("Plans", new JsonArray().add(child("Seq Scan")))))));
    assertNull(WriteGuard.plainInsert(plans(insert(child("Aggregate"), child("Result")))));
    assertNull(WriteGuard.plainInsert(plans(insert(child("Values Scan")).put("Conflict Resolution", "NOTHING"))));
    assertNull(WriteGuard.plainInsert(plans(insert(child("Result"))).add(new JsonObject().put("Plan", insert(child("Result"))))));
    assertNull(WriteGuard.plainInsert(plans(insert(child("Result")).put("Operation", "Update"))));
  }

  private static JsonObject child(String type) {
    return new JsonObject().put("Node Type", type);
  }

  private static JsonObject insert(JsonObject... children) {
    return new JsonObject().put("Node Type", "ModifyTable").put("Operation", "Insert").put("Relation Name", "t").put("Schema", "public")
        .put("Plans", new JsonArray(List.of((Object[]) children)));
  }

  private static JsonArray plans(JsonObject plan) {
    return new JsonArray().add(new JsonObject().put("Plan", plan));
  }
}
