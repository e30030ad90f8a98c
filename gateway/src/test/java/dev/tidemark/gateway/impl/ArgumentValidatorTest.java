package dev.tidemark.gateway.impl;

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
}
