package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.Signer;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Page cursors: a JSON payload, base64url-encoded, a dot, and the base64url HMAC-SHA256 of the
 * payload under a secret every node shares. Any node can check one; none can be forged or
 * altered. The payload is opaque to callers but not secret: it holds hashes and positions only.
 */
public final class CursorCodec {

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

  private final Signer signer;

  public CursorCodec(byte[] secret) {
    this.signer = new Signer(secret);
  }

  /** A secret from the configured value, or, when it is empty, from what every node of a cluster shares. */
  public static byte[] secret(String configured, String derivedFrom) {
    return Signer.secret(configured, "tidemark-cursor-v1", derivedFrom);
  }

  public String encode(JsonObject payload) {
    return signer.sign(payload);
  }

  /** The payload of a cursor this codec signed for {@code kind}; INVALID_CURSOR for anything else. */
  public JsonObject decode(String cursor, String kind) {
    JsonObject payload = signer.open(cursor).orElseThrow(CursorCodec::invalid);
    try {
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
    } catch (ClassCastException e) {
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
