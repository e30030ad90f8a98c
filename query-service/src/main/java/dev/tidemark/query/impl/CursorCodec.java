package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.keys.KeyRing;
import java.util.function.Supplier;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Page cursors: the payload JSON sealed with the database's key ring (AES-256-GCM) and bound to
 * the caller it was issued to. Any node opens one; nobody else can read, alter or use it, and a
 * rotated key keeps opening cursors during its grace period.
 */
public final class CursorCodec {

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  static final String PURPOSE = "cursor";

  private final Supplier<KeyRing> keys;

  public CursorCodec(Supplier<KeyRing> keys) {
    this.keys = keys;
  }

  public String encode(JsonObject payload, String callerId) {
    return keys.get().seal(PURPOSE, callerId, payload.encode().getBytes(StandardCharsets.UTF_8));
  }

  /** The payload of a cursor this codec sealed for {@code kind} and {@code callerId}; INVALID_CURSOR for anything else. */
  public JsonObject decode(String cursor, String kind, String callerId) {
    byte[] plain = keys.get().open(PURPOSE, callerId, cursor).orElseThrow(CursorCodec::invalid);
    try {
      JsonObject payload = new JsonObject(new String(plain, StandardCharsets.UTF_8));
      if (!kind.equals(payload.getString("k"))) {
        throw invalid();
      }
      Long issued = payload.getLong("iat");
      if (issued != null && System.currentTimeMillis() - issued > Limits.CURSOR_TTL_MS) {
        throw new ToolException(ErrorCode.CURSOR_EXPIRED,
            "The cursor is older than " + Limits.CURSOR_TTL_MS / 3_600_000 + " hours; start again without a cursor.",
            new JsonObject().put("argument", "cursor"));
      }
      return payload;
    } catch (ClassCastException | io.vertx.core.json.DecodeException e) {
      throw invalid();
    }
  }

  static ToolException invalid() {
    return new ToolException(ErrorCode.INVALID_CURSOR,
        "The cursor was not issued by Tidemark for this call. " + ErrorCode.INVALID_CURSOR.hint(),
        new JsonObject().put("argument", "cursor"));
  }

  /** A short, stable fingerprint of a value (a statement, its params, a filter). */
  public static String fingerprint(String value) {
    return B64.encodeToString(sha256(value.getBytes(StandardCharsets.UTF_8)));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
