package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class CursorCodecTest {

  private static KeyRing ring(int id) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, (byte) id);
    return new KeyRing(List.of(new KeyRing.Key(id, secret, 0, Long.MAX_VALUE)));
  }

  private final CursorCodec codec = new CursorCodec(() -> ring(1));

  @Test
  void aCursorRoundTripsOnAnyCodecWithTheSameKeyRing() {
    JsonObject payload = new JsonObject().put("k", "q").put("o", 200).put("iat", System.currentTimeMillis());
    String cursor = codec.encode(payload, "caller-a");
    assertEquals(payload, new CursorCodec(() -> ring(1)).decode(cursor, "q", "caller-a"));
    assertEquals(cursor, cursor.replaceAll("[^A-Za-z0-9_-]", ""), "base64url only");
  }

  @Test
  void aCursorOfAnotherCallerKindOrClusterIsInvalid() {
    String cursor = codec.encode(new JsonObject().put("k", "q").put("o", 200), "caller-a");
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode(cursor, "q", "caller-b")).code(),
        "a cursor belongs to the caller it was issued to");
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class,
        () -> new CursorCodec(() -> ring(2)).decode(cursor, "q", "caller-a")).code());
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode(cursor, "l", "caller-a")).code(),
        "a query cursor is not a list_rows cursor");
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode("garbage", "q", "caller-a")).code());
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode("a.b.c", "q", "caller-a")).code());
  }

  @Test
  void anOldCursorHasExpired() {
    String cursor = codec.encode(new JsonObject().put("k", "q").put("iat", System.currentTimeMillis() - Limits.CURSOR_TTL_MS - 1000), "c");
    assertEquals(ErrorCode.CURSOR_EXPIRED, assertThrows(ToolException.class, () -> codec.decode(cursor, "q", "c")).code());
  }
}
