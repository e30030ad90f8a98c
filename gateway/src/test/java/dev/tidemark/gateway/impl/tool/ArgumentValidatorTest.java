package dev.tidemark.gateway.impl.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolCatalog;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ArgumentValidatorTest {

  private final ArgumentValidator validator = ArgumentValidator.forTools(ToolCatalog.all());

  @Test
  void argumentsThatFitHaveNoFaults() {
    assertTrue(validator.faults("list_tables", new JsonObject()).isEmpty());
    assertTrue(validator.faults("list_tables", new JsonObject().put("schema", "public")).isEmpty());
    assertTrue(validator.faults("status", new JsonObject()).isEmpty());
  }

  @Test
  void aValueNestedPastTheLimitIsRefusedBeforeAnythingWalksIt() {
    JsonArray deep = new JsonArray();
    JsonArray inner = deep;
    for (int i = 0; i < 5000; i++) {
      JsonArray next = new JsonArray();
      inner.add(next);
      inner = next;
    }
    JsonArray faults = validator.faults("query", new JsonObject().put("sql", "SELECT $1").put("params", new JsonArray().add(deep)));
    assertEquals(1, faults.size(), faults.encode());
    assertTrue(faults.getJsonObject(0).getString("expected").contains("nested at most " + ArgumentValidator.MAX_DEPTH), faults.encode());
    JsonArray shallow = new JsonArray().add(new JsonArray().add(new JsonArray().add(1)));
    assertTrue(validator.faults("query", new JsonObject().put("sql", "SELECT $1").put("params", new JsonArray().add(shallow))).isEmpty());
  }

  @Test
  void everyFaultIsListedWithItsPointer() {
    JsonArray faults = validator.faults("list_tables", new JsonObject().put("schema", 5).put("sceham", "public"));
    assertEquals(2, faults.size(), faults.encode());
    assertTrue(faults.stream().anyMatch(f -> ((JsonObject) f).getString("pointer").equals("/schema")
        && ((JsonObject) f).getString("expected").contains("string")));
    assertTrue(faults.stream().anyMatch(f -> ((JsonObject) f).getString("pointer").equals("/sceham")
        && ((JsonObject) f).getString("expected").contains("no such argument")));
  }

  @Test
  void aMisspeltArgumentIsRefusedNotIgnored() {
    JsonArray faults = validator.faults("status", new JsonObject().put("verbose", true));
    assertEquals(1, faults.size());
    assertEquals("/verbose", faults.getJsonObject(0).getString("pointer"));
  }

  @Test
  void faultsNeverEchoTheValueSent() {
    String secret = "s3cr3t-value-" + "x".repeat(80);
    JsonArray faults = validator.faults("list_tables", new JsonObject().put("schema", secret));
    assertEquals(1, faults.size());
    assertEquals("/schema", faults.getJsonObject(0).getString("pointer"));
    assertTrue(faults.getJsonObject(0).getString("expected").contains("at most 63"));
    assertFalse(faults.encode().contains("s3cr3t"));
    JsonArray typeFaults = validator.faults("list_tables", new JsonObject().put("schema", new JsonObject().put("s3cr3t", 1)));
    assertFalse(typeFaults.encode().contains("s3cr3t"), typeFaults.encode());
  }

  @Test
  void aNulCharacterInAnyTextArgumentIsAFaultNamingItsPointerNotItsValue() {
    JsonArray faults = validator.faults("query", new JsonObject().put("sql", "SELECT 's3cr3t\u0000'"));
    assertEquals(1, faults.size(), faults.encode());
    assertEquals("/sql", faults.getJsonObject(0).getString("pointer"));
    assertTrue(faults.getJsonObject(0).getString("expected").contains("NUL"), faults.encode());
    assertFalse(faults.encode().contains("s3cr3t"), faults.encode());

    JsonArray nested = validator.faults("query", new JsonObject().put("sql", "SELECT $1, $2")
        .put("params", new JsonArray().add("fine").add("bad\u0000")));
    assertEquals(1, nested.size(), nested.encode());
    assertEquals("/params/1", nested.getJsonObject(0).getString("pointer"));

    JsonArray inRows = validator.faults("insert_rows", new JsonObject().put("table", "customers")
        .put("rows", new JsonArray().add(new JsonObject().put("name", "a\u0000b").put("n\u0000ame", "x"))));
    assertTrue(inRows.stream().anyMatch(f -> ((JsonObject) f).getString("pointer").equals("/rows/0/name")), inRows.encode());
    assertTrue(inRows.stream().anyMatch(f -> ((JsonObject) f).getString("pointer").equals("/rows/0")), inRows.encode());
    assertTrue(inRows.stream().noneMatch(f -> ((JsonObject) f).getString("pointer").indexOf(0) >= 0),
        "no pointer carries the NUL itself: " + inRows.encode());

    assertTrue(validator.faults("query", new JsonObject().put("sql", "SELECT '\\u0000'")).isEmpty(),
        "the six characters \\u0000 written out are text like any other");
  }

  @Test
  void aRepeatedItemOfAnArrayThatMustHoldDifferentItemsIsOneFaultAtTheArray() {
    JsonObject args = new JsonObject().put("consumer", "c").put("lease_token", "t");
    JsonArray ids = new JsonArray();
    for (int i = 0; i < 500; i++) {
      ids.add("e" + i);
    }
    assertTrue(validator.faults("events_ack", args.copy().put("event_ids", ids)).isEmpty(), "500 different ids fit");
    JsonArray faults = validator.faults("events_ack", args.copy().put("event_ids", ids.copy().set(499, "e7")));
    assertEquals(1, faults.size(), faults.encode());
    assertEquals("/event_ids", faults.getJsonObject(0).getString("pointer"));
    assertTrue(faults.getJsonObject(0).getString("expected").contains("all different"), faults.encode());
    JsonArray both = validator.faults("events_ack", args.copy().put("event_ids", new JsonArray().add("a").add("a")).put("extra", 1));
    assertEquals(2, both.size(), "the repeat and the unknown argument: " + both.encode());
  }
}
