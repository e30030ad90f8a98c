package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ChangePositionTest {

  @Test
  void positionsOrderByCommitThenChange() {
    assertTrue(new ChangePosition(2, 1).isAfter(new ChangePosition(1, 99)));
    assertTrue(new ChangePosition(2, 5).isAfter(new ChangePosition(2, 4)));
    assertTrue(!new ChangePosition(2, 5).isAfter(new ChangePosition(2, 5)));
  }

  @Test
  void noticesRoundTripIgnoreUnknownFieldsAndRefuseMissingOnes() {
    ChangeNotice n = new ChangeNotice("public", "orders", "UPDATE", new JsonArray().add(5), "cur");
    assertEquals(n, ChangeNotice.fromJson(n.toJson().put("future_field", 1)));
    ChangeNotice truncate = new ChangeNotice("public", "orders", "TRUNCATE", null, "cur");
    assertTrue(!truncate.toJson().containsKey("key"), "absent, not null");
    SchemaChangeNotice s = new SchemaChangeNotice("public", "orders", "ALTER TABLE", "cur");
    assertEquals(s, SchemaChangeNotice.fromJson(s.toJson().put("extra", true)));
    try {
      ChangeNotice.fromJson(new JsonObject().put("schema", "public"));
      throw new AssertionError("a notice without table was accepted");
    } catch (IllegalArgumentException expected) {
      assertTrue(expected.getMessage().contains("table"));
    }
  }
}
