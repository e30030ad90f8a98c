package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Plan ids: {@code p1.} + base64url(payload JSON) + {@code .} + base64url(HMAC-SHA256 of the
 * payload) under a secret every command node shares, so any node verifies one with no plan store.
 * The payload binds the plan to the caller ({@code c}), the tool ({@code t}), the hash of the
 * canonical arguments ({@code a}), the fingerprint of every touched row's before-image ({@code f}),
 * an expiry in epoch milliseconds ({@code x}), whether the change removes data ({@code r}), its
 * totals ({@code s}, for the confirmation message) and a random nonce ({@code n}).
 */
public final class PlanCodec {

  static final String PREFIX = "p1.";
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** What a verified plan id says. */
  public record Plan(String caller, String tool, String inputHash, String fingerprint, long expiresAt, boolean removes,
                     JsonObject totals) {}

  private final SecretKeySpec key;

  public PlanCodec(byte[] secret) {
    if (secret.length < 16) {
      throw new IllegalArgumentException("a plan secret needs at least 16 bytes");
    }
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  /** A secret from the configured value, or, when it is empty, from what every node of a cluster shares. */
  public static byte[] secret(String configured, String derivedFrom) {
    String material = configured == null || configured.isEmpty() ? "tidemark-plan-v1\u0000" + derivedFrom : configured;
    return Canonical.sha256(material.getBytes(StandardCharsets.UTF_8));
  }

  public String encode(Plan plan) {
    byte[] nonce = new byte[12];
    RANDOM.nextBytes(nonce);
    JsonObject payload = new JsonObject().put("c", plan.caller()).put("t", plan.tool()).put("a", plan.inputHash())
        .put("f", plan.fingerprint()).put("x", plan.expiresAt()).put("r", plan.removes()).put("s", plan.totals())
        .put("n", B64.encodeToString(nonce));
    byte[] body = payload.encode().getBytes(StandardCharsets.UTF_8);
    return PREFIX + B64.encodeToString(body) + "." + B64.encodeToString(mac(body));
  }

  /**
   * The plan, when {@code planId} was signed by this cluster for this caller, tool and canonical
   * input and has not expired; INVALID_PLAN otherwise, saying which.
   */
  public Plan verify(String planId, String caller, String tool, String inputHash, long nowMillis) {
    Plan plan = decode(planId);
    if (nowMillis > plan.expiresAt()) {
      throw invalid("The plan_id expired; plan the change again.");
    }
    if (!plan.caller().equals(caller)) {
      throw invalid("The plan_id was made for another caller; plan the change yourself.");
    }
    if (!plan.tool().equals(tool) || !plan.inputHash().equals(inputHash)) {
      throw invalid("The plan_id was made for other arguments; commit with exactly the arguments of the plan, or plan again.");
    }
    return plan;
  }

  public Plan decode(String planId) {
    if (!planId.startsWith(PREFIX)) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
    String rest = planId.substring(PREFIX.length());
    int dot = rest.indexOf('.');
    if (dot <= 0 || dot != rest.lastIndexOf('.')) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
    try {
      byte[] body = B64D.decode(rest.substring(0, dot));
      byte[] sig = B64D.decode(rest.substring(dot + 1));
      if (!MessageDigest.isEqual(sig, mac(body))) {
        throw invalid("The plan_id was altered or signed by another cluster. " + ErrorCode.INVALID_PLAN.hint());
      }
      JsonObject p = new JsonObject(new String(body, StandardCharsets.UTF_8));
      return new Plan(p.getString("c"), p.getString("t"), p.getString("a"), p.getString("f"), p.getLong("x"),
          p.getBoolean("r"), p.getJsonObject("s"));
    } catch (IllegalArgumentException | DecodeException | ClassCastException | NullPointerException e) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
  }

  /** A short stable id of a plan id, stored to make sure a plan commits at most once. */
  public static String planHash(String planId) {
    return Canonical.hash(planId);
  }

  static ToolException invalid(String message) {
    return new ToolException(ErrorCode.INVALID_PLAN, message + " Nothing was written.", new JsonObject().put("argument", "plan_id"));
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
