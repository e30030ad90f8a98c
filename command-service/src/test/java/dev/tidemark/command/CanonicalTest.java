package dev.tidemark.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class CanonicalTest {

  @Test
  void keysAreSortedAtEveryDepthAndSpacesLeftOut() {
    JsonObject value = new JsonObject("{\"b\": 1, \"a\": {\"z\": [true, null, \"x\"], \"y\": 2.5}}");
    assertEquals("{\"a\":{\"y\":2.5,\"z\":[true,null,\"x\"]},\"b\":1}", Canonical.json(value));
  }

  @Test
  void theInputHashIgnoresKeyOrderAndTheFlowArguments() {
    JsonObject one = new JsonObject().put("table", "t").put("rows", new JsonArray().add(new JsonObject().put("a", 1).put("b", 2)));
    JsonObject two = new JsonObject().put("rows", new JsonArray().add(new JsonObject().put("b", 2).put("a", 1))).put("table", "t")
        .put("plan_id", "p1.x.y").put("confirm", true).put("idempotency_key", "k");
    assertEquals(Canonical.inputHash("insert_rows", one), Canonical.inputHash("insert_rows", two));
  }

  @Test
  void theInputHashDiffersForAnotherToolOrAnotherValue() {
    JsonObject args = new JsonObject().put("table", "t").put("key", 1);
    assertNotEquals(Canonical.inputHash("delete_rows", args), Canonical.inputHash("update_rows", args));
    assertNotEquals(Canonical.inputHash("delete_rows", args), Canonical.inputHash("delete_rows", args.copy().put("key", "1")));
  }

  @Test
  void aReactionHashesTheSameOnEveryDeliveryOfItsEventButNotForAnotherEvent() {
    JsonObject first = new JsonObject().put("table", "t").put("rows", new JsonArray().add(new JsonObject().put("id", 1)))
        .put("caused_by", new JsonObject().put("consumer", "c").put("event_id", "5-9").put("lease_token", "one").put("ack", true));
    JsonObject redelivered = first.copy();
    redelivered.getJsonObject("caused_by").put("lease_token", "two").remove("ack");
    assertEquals(Canonical.inputHash("insert_rows", first), Canonical.inputHash("insert_rows", redelivered));
    JsonObject other = first.copy();
    other.getJsonObject("caused_by").put("event_id", "5-10");
    assertNotEquals(Canonical.inputHash("insert_rows", first), Canonical.inputHash("insert_rows", other));
  }
}
