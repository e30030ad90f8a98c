package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class CursorCodecTest {

  private final CursorCodec codec = new CursorCodec(CursorCodec.secret("a-shared-secret", "unused"));

  @Test
  void aCursorRoundTripsOnAnyCodecWithTheSameSecret() {
    JsonObject payload = new JsonObject().put("k", "q").put("o", 200).put("iat", System.currentTimeMillis());
    String cursor = codec.encode(payload);
    assertEquals(payload, new CursorCodec(CursorCodec.secret("a-shared-secret", "other")).decode(cursor, "q"));
    assEqualsUrlSafe(cursor);
  }

  private static void assEqualsUrlSafe(String cursor) {
    assertEquals(cursor, cursor.replaceAll("[^A-Za-z0-9_.-]", ""), "base64url and a dot only");
  }

  @Test
  void anAlteredOrForeignCursorIsInvalid() {
    String cursor = codec.encode(new JsonObject().put("k", "q").put("o", 200));
    String body = new String(Base64.getUrlDecoder().decode(cursor.substring(0, cursor.indexOf('.'))), StandardCharsets.UTF_8);
    String altered = Base64.getUrlEncoder().withoutPadding().encodeToString(body.replace("200", "999").getBytes(StandardCharsets.UTF_8))
        + cursor.substring(cursor.indexOf('.'));
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode(altered, "q")).code());
    CursorCodec other = new CursorCodec(CursorCodec.secret("another-secret", "unused"));
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> other.decode(cursor, "q")).code());
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode(cursor, "l")).code(), "a query cursor is not a list_rows cursor");
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode("garbage", "q")).code());
    assertEquals(ErrorCode.INVALID_CURSOR, assertThrows(ToolException.class, () -> codec.decode("a.b.c", "q")).code());
  }

  @Test
  void anOldCursorHasExpired() {
    String cursor = codec.encode(new JsonObject().put("k", "q").put("iat", System.currentTimeMillis() - Limits.CURSOR_TTL_MS - 1000));
    assertEquals(ErrorCode.CURSOR_EXPIRED, assertThrows(ToolException.class, () -> codec.decode(cursor, "q")).code());
  }

  @Test
  void anEmptySecretIsDerivedFromWhatTheNodesShare() {
    assertEquals(new String(CursorCodec.secret("", "db1")), new String(CursorCodec.secret("", "db1")));
    assertNotEquals(new String(CursorCodec.secret("", "db1")), new String(CursorCodec.secret("", "db2")));
  }
}
