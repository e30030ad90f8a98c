package dev.tidemark.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ChangePosition;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ChangeCursorTest {

  private static final KeyRing KEY = ring(1, (byte) 7, Long.MAX_VALUE);

  private static KeyRing ring(int id, byte fill, long retiresAt) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, fill);
    return new KeyRing(java.util.List.of(new KeyRing.Key(id, secret, 0, retiresAt)));
  }

  @Test
  void aCursorDecodesToThePositionItWasMadeFrom() {
    ChangePosition p = new ChangePosition(42, 1_000_123);
    String cursor = ChangeCursor.encode(p, KEY);
    assertTrue(cursor.matches("[A-Za-z0-9_-]+"), cursor);
    assertEquals(Optional.of(p), ChangeCursor.decode(cursor, KEY));
  }

  @Test
  void aTamperedForeignOrMalformedCursorDoesNotDecode() {
    String cursor = ChangeCursor.encode(new ChangePosition(7, 9), KEY);
    char[] c = cursor.toCharArray();
    c[5] = c[5] == 'A' ? 'B' : 'A';
    assertEquals(Optional.empty(), ChangeCursor.decode(new String(c), KEY));
    assertEquals(Optional.empty(), ChangeCursor.decode(cursor, ring(1, (byte) 8, Long.MAX_VALUE)), "another database's key");
    assertEquals(Optional.empty(), ChangeCursor.decode(cursor, ring(1, (byte) 7, System.currentTimeMillis() - 1)), "a retired key");
    assertEquals(Optional.empty(), ChangeCursor.decode("%%%", KEY));
    assertEquals(Optional.empty(), ChangeCursor.decode(cursor.substring(2), KEY));
  }
}
