package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Page cursors: a JSON payload, base64url-encoded, a dot, and the base64url HMAC-SHA256 of the
 * payload under a secret every node shares. Any node can check one; none can be forged or
 * altered. The payload is opaque to callers but not secret: it holds hashes and positions only.
 */
public final class CursorCodec {

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  private final SecretKeySpec key;

  public CursorCodec(byte[] secret) {
    if (secret.length < 16) {
      throw new IllegalArgumentException("a cursor secret needs at least 16 bytes");
    }
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  /** A secret from the configured value, or, when it is empty, from what every node of a cluster shares. */
  public static byte[] secret(String configured, String derivedFrom) {
    String material = configured == null || configured.isEmpty() ? "tidemark-cursor-v1\u0000" + derivedFrom : configured;
    return sha256(material.getBytes(StandardCharsets.UTF_8));
  }

  public String encode(JsonObject payload) {
    byte[] body = payload.encode().getBytes(StandardCharsets.UTF_8);
    return B64.encodeToString(body) + "." + B64.encodeToString(mac(body));
  }

  /** The payload of a cursor this codec signed for {@code kind}; INVALID_CURSOR for anything else. */
  public JsonObject decode(String cursor, String kind) {
    int dot = cursor.indexOf('.');
    if (dot <= 0 || dot != cursor.lastIndexOf('.')) {
      throw invalid();
    }
    try {
      byte[] body = B64D.decode(cursor.substring(0, dot));
      byte[] sig = B64D.decode(cursor.substring(dot + 1));
      if (!MessageDigest.isEqual(sig, mac(body))) {
        throw invalid();
      }
      JsonObject payload = new JsonObject(new String(body, StandardCharsets.UTF_8));
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
    } catch (IllegalArgumentException | DecodeException | ClassCastException e) {
      throw invalid();
    }
  }

  static ToolException invalid() {
    return new ToolException(ErrorCode.INVALID_CURSOR,
        "The cursor was not issued by Tidemark for this call. " + ErrorCode.INVALID_CURSOR.hint(),
        new JsonObject().put("argument", "cursor"));
  }

  private byte[] mac(byte[] body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
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
