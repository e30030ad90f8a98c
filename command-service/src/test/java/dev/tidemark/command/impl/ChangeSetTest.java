package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.command.impl.ChangeSet.Change;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChangeSetTest {

  private static Change update(int id, int before, int after) {
    return new Change("public.t", "UPDATE", new JsonArray().add(id),
        new JsonObject().put("id", id).put("v", before), new JsonObject().put("id", id).put("v", after));
  }

  private static Change insert(int id) {
    return new Change("public.t", "INSERT", new JsonArray().add(id), null, new JsonObject().put("id", id));
  }

  private static Change delete(String table, int id) {
    return new Change(table, "DELETE", new JsonArray().add(id), new JsonObject().put("id", id), null);
  }

  @Test
  void theFingerprintIgnoresOrderAfterImagesAndGeneratedKeysOfInserts() {
    ChangeSet plan = new ChangeSet(List.of(update(1, 1, 2), insert(7), update(2, 5, 6)));
    ChangeSet commit = new ChangeSet(List.of(insert(8), update(2, 5, 60), update(1, 1, 20)));
    assertEquals(plan.fingerprint(), commit.fingerprint());
  }

  @Test
  void theFingerprintChangesWhenATouchedRowOrTheSetOfTouchedRowsChanged() {
    ChangeSet plan = new ChangeSet(List.of(update(1, 1, 2), update(2, 5, 6)));
    assertNotEquals(plan.fingerprint(), new ChangeSet(List.of(update(1, 9, 2), update(2, 5, 6))).fingerprint(), "a before-image changed");
    assertNotEquals(plan.fingerprint(), new ChangeSet(List.of(update(1, 1, 2))).fingerprint(), "a row is no longer touched");
    assertNotEquals(plan.fingerprint(), new ChangeSet(List.of(update(1, 1, 2), update(2, 5, 6), update(3, 0, 1))).fingerprint(),
        "a new row is touched");
    assertNotEquals(new ChangeSet(List.of(insert(1))).fingerprint(), new ChangeSet(List.of(insert(1), insert(2))).fingerprint());
  }

  @Test
  void countsPerTableTotalsAndRemovals() {
    ChangeSet set = new ChangeSet(List.of(delete("public.a", 1), delete("public.b", 1), delete("public.b", 2), update(1, 1, 2)));
    assertTrue(set.removes());
    assertEquals(new JsonObject().put("inserted", 0).put("updated", 1).put("deleted", 3), set.totals());
    assertEquals(new JsonObject().put("table", "public.b").put("inserted", 0).put("updated", 0).put("deleted", 2), set.perTable().getJsonObject(1));
    assertEquals("deletes 1 row in public.a; deletes 2 rows in public.b; updates 1 row in public.t", set.describe());
    assertFalse(new ChangeSet(List.of(insert(1))).removes());
    assertTrue(new ChangeSet(List.of(new Change("public.t", "TRUNCATE", null, null, null))).removes());
  }

  @Test
  void perOperationCountsRowsAndNamesTheKeysOfRemovedAndUpdatedRowsUpToTheCap() {
    List<Change> changes = new java.util.ArrayList<>();
    for (int i = 1; i <= ChangeSet.KEYS_PER_TABLE_AND_OP + 5; i++) {
      changes.add(delete("public.a", i));
    }
    changes.add(update(7, 1, 2));
    changes.add(insert(9));
    changes.add(new Change("public.c", "DELETE", new JsonArray().add(3).add("x"), new JsonObject().put("k", 3).put("n", "x"), null));
    changes.add(new Change("public.d", "TRUNCATE", null, null, null));
    JsonArray ops = new ChangeSet(changes).perOperation();
    JsonArray firstKeys = new JsonArray();
    for (int i = 1; i <= ChangeSet.KEYS_PER_TABLE_AND_OP; i++) {
      firstKeys.add(i);
    }
    assertEquals(new JsonObject().put("table", "public.a").put("op", "DELETE").put("rows", ChangeSet.KEYS_PER_TABLE_AND_OP + 5)
        .put("keys", firstKeys), ops.getJsonObject(0), "every row counted, the first keys named, a one-column key as its value");
    assertEquals(new JsonObject().put("table", "public.t").put("op", "UPDATE").put("rows", 1).put("keys", new JsonArray().add(7)),
        ops.getJsonObject(1));
    assertEquals(new JsonObject().put("table", "public.t").put("op", "INSERT").put("rows", 1), ops.getJsonObject(2),
        "an inserted row has no key before it is written");
    assertEquals(new JsonArray().add(new JsonArray().add(3).add("x")), ops.getJsonObject(3).getJsonArray("keys"), "a composite key stays an array");
    assertEquals(new JsonObject().put("table", "public.d").put("op", "TRUNCATE").putNull("rows"), ops.getJsonObject(4));
  }

  @Test
  void samplesAreCappedPerTableAndOperation() {
    ChangeSet set = new ChangeSet(List.of(delete("public.a", 1), delete("public.a", 2), delete("public.a", 3), delete("public.a", 4),
        delete("public.b", 1)));
    assertEquals(ChangeSet.SAMPLES_PER_TABLE_AND_OP + 1, set.samples().size());
  }

  @Test
  void anUpdateSampleShowsTheKeyAndOnlyTheColumnsThatChange() {
    Change c = new Change("public.t", "UPDATE", new JsonArray().add(1), new JsonObject().put("id", 1).put("v", 2).put("w", "same"),
        new JsonObject().put("id", 1).put("v", 3).put("w", "same"));
    JsonObject sample = new ChangeSet(List.of(c)).samples().getJsonObject(0);
    assertEquals(new JsonArray().add(1), sample.getValue("key"));
    assertEquals(new JsonObject().put("v", 2), sample.getJsonObject("before"));
    assertEquals(new JsonObject().put("v", 3), sample.getJsonObject("after"));
  }

  @Test
  void theImagesHashIgnoresOrderButNotAnyValueOfAnyImage() {
    ChangeSet shown = new ChangeSet(List.of(update(1, 1, 2), insert(7), delete("public.a", 3)));
    assertEquals(shown.imagesHash(), new ChangeSet(List.of(delete("public.a", 3), update(1, 1, 2), insert(7))).imagesHash());
    assertNotEquals(shown.imagesHash(), new ChangeSet(List.of(update(1, 1, 20), insert(7), delete("public.a", 3))).imagesHash(),
        "an after-image with another value");
    assertNotEquals(shown.imagesHash(), new ChangeSet(List.of(update(1, 1, 2), insert(8), delete("public.a", 3))).imagesHash(),
        "an inserted row with another generated key, which the fingerprint of a plan lets pass");
    assertNotEquals(shown.imagesHash(), new ChangeSet(List.of(update(1, 0, 2), insert(7), delete("public.a", 3))).imagesHash(),
        "a before-image changed since");
    assertNotEquals(shown.imagesHash(), new ChangeSet(List.of(update(1, 1, 2), insert(7))).imagesHash(), "a row less");
    assertNotEquals(shown.imagesHash(), new ChangeSet(List.of(update(1, 1, 2), insert(7), delete("public.a", 3), insert(9))).imagesHash(),
        "a row more");
  }

  @Test
  void rowsShowEveryChangeWholeWithTheColumnsAnUpdateChanges() {
    Change c = new Change("public.t", "UPDATE", new JsonArray().add(1), new JsonObject().put("id", 1).put("v", 2).put("w", "same"),
        new JsonObject().put("id", 1).put("v", 3).put("w", "same"));
    JsonArray rows = new ChangeSet(List.of(c, insert(7), insert(8), insert(9))).rows();
    assertEquals(4, rows.size(), "every row, not a sample");
    JsonObject row = rows.getJsonObject(0);
    assertEquals(new JsonObject().put("id", 1).put("v", 2).put("w", "same"), row.getJsonObject("before"));
    assertEquals(new JsonObject().put("id", 1).put("v", 3).put("w", "same"), row.getJsonObject("after"));
    assertEquals(new JsonArray().add("v"), row.getJsonArray("changed"));
    assertFalse(rows.getJsonObject(1).containsKey("before"));
  }
}
