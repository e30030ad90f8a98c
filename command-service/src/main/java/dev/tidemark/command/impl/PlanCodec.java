package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.KeyRing;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Plan ids: {@code p2.} + the payload JSON sealed with the database's key ring (AES-256-GCM), so
 * any node verifies one with no plan store, nobody alters one, and a rotated key keeps verifying
 * plans during its grace period.
 * The payload binds the plan to the caller ({@code c}), the tool ({@code t}), the hash of the
 * canonical arguments ({@code a}), the fingerprint of every touched row's before-image ({@code f}),
 * an expiry in epoch milliseconds ({@code x}), whether the change removes data ({@code r}), its
 * totals ({@code s}, for the confirmation message) and a random nonce ({@code n}).
 */
public final class PlanCodec {

  static final String PREFIX = "p2.";
  static final String PURPOSE = "plan";
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** What a verified plan id says. */
  public record Plan(String caller, String tool, String inputHash, String fingerprint, long expiresAt, boolean removes,
                     JsonObject totals) {}

  private final Supplier<KeyRing> keys;

  public PlanCodec(Supplier<KeyRing> keys) {
    this.keys = keys;
  }

  public String encode(Plan plan) {
    byte[] nonce = new byte[12];
    RANDOM.nextBytes(nonce);
    JsonObject payload = new JsonObject().put("c", plan.caller()).put("t", plan.tool()).put("a", plan.inputHash())
        .put("f", plan.fingerprint()).put("x", plan.expiresAt()).put("r", plan.removes()).put("s", plan.totals())
        .put("n", B64.encodeToString(nonce));
    return PREFIX + keys.get().seal(PURPOSE, "", payload.encode().getBytes(StandardCharsets.UTF_8));
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
    byte[] plain = keys.get().open(PURPOSE, "", planId.substring(PREFIX.length())).orElseThrow(() ->
        invalid("The plan_id was altered, signed by another cluster, or not issued by Tidemark. " + ErrorCode.INVALID_PLAN.hint()));
    try {
      JsonObject p = new JsonObject(new String(plain, StandardCharsets.UTF_8));
      return new Plan(p.getString("c"), p.getString("t"), p.getString("a"), p.getString("f"), p.getLong("x"),
          p.getBoolean("r"), p.getJsonObject("s"));
    } catch (ClassCastException | NullPointerException | io.vertx.core.json.DecodeException e) {
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

}
