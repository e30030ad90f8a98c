package dev.tidemark.keys;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs JSON payloads that callers carry between calls (page cursors, plan ids) under a secret
 * every node of a cluster shares: base64url(payload) {@code .} base64url(HMAC-SHA256). Any node can
 * check one with no shared store; no caller can forge or alter one. Payloads are opaque to
 * callers but not secret.
 */
public final class Signer {

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  private final SecretKeySpec key;

  public Signer(byte[] secret) {
    if (secret.length < 16) {
      throw new IllegalArgumentException("a signing secret needs at least 16 bytes");
    }
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  /**
   * The configured secret, or, when it is empty, one derived from what every node of a cluster
   * shares; {@code label} keeps secrets for different uses apart.
   */
  public static byte[] secret(String configured, String label, String derivedFrom) {
    String material = configured == null || configured.isEmpty() ? label + "\u0000" + derivedFrom : configured;
    try {
      return MessageDigest.getInstance("SHA-256").digest(material.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  public String sign(JsonObject payload) {
    byte[] body = payload.encode().getBytes(StandardCharsets.UTF_8);
    return B64.encodeToString(body) + "." + B64.encodeToString(mac(body));
  }

  /** The payload of a token signed under this secret; empty when it is malformed, altered or another secret's. */
  public Optional<JsonObject> open(String token) {
    int dot = token.indexOf('.');
    if (dot <= 0 || dot != token.lastIndexOf('.')) {
      return Optional.empty();
    }
    try {
      byte[] body = B64D.decode(token.substring(0, dot));
      byte[] sig = B64D.decode(token.substring(dot + 1));
      if (!MessageDigest.isEqual(sig, mac(body))) {
        return Optional.empty();
      }
      return Optional.of(new JsonObject(new String(body, StandardCharsets.UTF_8)));
    } catch (IllegalArgumentException | DecodeException | ClassCastException e) {
      return Optional.empty();
    }
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
}
