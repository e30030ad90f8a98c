package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ChangePositionTest {

  private static final KeyRing KEY = ring(1, (byte) 7, Long.MAX_VALUE);

  private static KeyRing ring(int id, byte fill, long retiresAt) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, fill);
    return new KeyRing(java.util.List.of(new KeyRing.Key(id, secret, 0, retiresAt)));
  }

  @Test
  void aCursorDecodesToThePositionItWasMadeFrom() {
    ChangePosition p = new ChangePosition(42, 1_000_123);
    String cursor = p.encode(KEY);
    assertTrue(cursor.matches("[A-Za-z0-9_-]+"), cursor);
    assertEquals(Optional.of(p), ChangePosition.decode(cursor, KEY));
  }

  @Test
  void aTamperedForeignOrMalformedCursorDoesNotDecode() {
    String cursor = new ChangePosition(7, 9).encode(KEY);
    char[] c = cursor.toCharArray();
    c[5] = c[5] == 'A' ? 'B' : 'A';
    assertEquals(Optional.empty(), ChangePosition.decode(new String(c), KEY));
    assertEquals(Optional.empty(), ChangePosition.decode(cursor, ring(1, (byte) 8, Long.MAX_VALUE)), "another database's key");
    assertEquals(Optional.empty(), ChangePosition.decode(cursor, ring(1, (byte) 7, System.currentTimeMillis() - 1)), "a retired key");
    assertEquals(Optional.empty(), ChangePosition.decode("%%%", KEY));
    assertEquals(Optional.empty(), ChangePosition.decode(cursor.substring(2), KEY));
  }

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
