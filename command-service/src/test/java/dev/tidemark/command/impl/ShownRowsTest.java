package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ShownRowsTest {

  private static JsonObject row(String table, String op, int id, JsonObject before, JsonObject after) {
    JsonObject r = new JsonObject().put("table", table).put("op", op).put("key", new JsonObject().put("id", id));
    if (before != null) {
      r.put("before", before);
    }
    if (after != null) {
      r.put("after", after);
    }
    return r;
  }

  private static JsonObject salary(int id, int amount) {
    return new JsonObject().put("id", id).put("amount", amount).put("note", "x");
  }

  @Test
  void rowsThatAreTheSameShowNoDifference() {
    JsonArray shown = new JsonArray().add(row("public.s", "UPDATE", 2, salary(2, 200), salary(2, 3)).put("changed", new JsonArray().add("amount")));
    JsonArray now = new JsonArray().add(row("public.s", "UPDATE", 2, salary(2, 200), salary(2, 3)));
    assertTrue(ShownRows.differences(shown, now).isEmpty(), "what only tells people (changed) is not a difference");
  }

  @Test
  void anAfterImageWithAnotherValueNamesItsColumnButNotTheValue() {
    JsonArray shown = new JsonArray().add(row("public.s", "UPDATE", 2, salary(2, 200), salary(2, 3)));
    JsonArray now = new JsonArray().add(row("public.s", "UPDATE", 2, salary(2, 200), salary(2, 5000)));
    JsonArray d = ShownRows.differences(shown, now);
    assertEquals(1, d.size());
    assertEquals(ShownRows.OTHER_VALUES, d.getJsonObject(0).getString("difference"));
    assertEquals(new JsonArray().add("amount"), d.getJsonObject(0).getJsonArray("columns"));
    String text = ShownRows.describe(d);
    assertEquals("public.s: 1 updated row would be written with other values than shown (amount)", text);
    assertTrue(!text.contains("5000") && !text.contains("200"), text);
  }

  @Test
  void aBeforeImageThatChangedIsNamedAsChangedSince() {
    JsonArray shown = new JsonArray().add(row("public.s", "UPDATE", 1, salary(1, 100), salary(1, 300)));
    JsonArray now = new JsonArray().add(row("public.s", "UPDATE", 1, salary(1, 110), salary(1, 300)));
    assertEquals("public.s: 1 updated row changed since it was shown (amount)", ShownRows.describe(ShownRows.differences(shown, now)));
  }

  @Test
  void anInsertWithAnotherGeneratedKeyIsTheSameRowWithOtherValues() {
    JsonArray shown = new JsonArray().add(row("public.s", "INSERT", 17, null, salary(17, 1)));
    JsonArray now = new JsonArray().add(row("public.s", "INSERT", 18, null, salary(18, 1)));
    JsonArray d = ShownRows.differences(shown, now);
    assertEquals(1, d.size(), d::encode);
    assertEquals(new JsonArray().add("id"), d.getJsonObject(0).getJsonArray("columns"));
  }

  @Test
  void rowsNoLongerWrittenAndRowsWrittenTooAreNamedPerTable() {
    JsonArray shown = new JsonArray().add(row("public.s", "UPDATE", 1, salary(1, 1), salary(1, 2)))
        .add(row("public.s", "UPDATE", 2, salary(2, 1), salary(2, 2)));
    JsonArray now = new JsonArray().add(row("public.s", "UPDATE", 1, salary(1, 1), salary(1, 2)))
        .add(row("public.ledger", "INSERT", 9, null, new JsonObject().put("id", 9)));
    assertEquals("public.s: 1 updated row shown would no longer be written; public.ledger: 1 inserted row not shown would be written too",
        ShownRows.describe(ShownRows.differences(shown, now)));
  }
}
