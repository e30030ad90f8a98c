package dev.tidemark.command;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.json.JsonObject;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * Plan ids: {@code p3.} + a binary payload sealed with the database's key ring (AES-256-GCM), so
 * any node verifies one with no plan store, nobody alters or forges one, and a rotated key keeps
 * verifying plans during its grace period.
 * The caller, the tool and the hash of the canonical arguments are not in the payload: they are
 * the associated data the seal authenticates, so a plan id opens only for the caller, tool and
 * arguments it was made for, and an agent pays no tokens to carry them back. The payload holds
 * the expiry in epoch milliseconds, whether the change removes data, its totals (for the
 * confirmation message) and the fingerprint of every touched row's before-image. The seal's
 * random IV makes two plans of one change two different ids.
 */
public final class PlanCodec {

  static final String PREFIX = "p3.";
  static final String PURPOSE = "plan";
  private static final byte FORMAT = 1;
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  /** What a verified plan id says. */
  public record Plan(String caller, String tool, String inputHash, String fingerprint, long expiresAt, boolean removes,
                     JsonObject totals) {}

  private final Supplier<KeyRing> keys;

  public PlanCodec(Supplier<KeyRing> keys) {
    this.keys = keys;
  }

  public String encode(Plan plan) {
    byte[] fingerprint = B64D.decode(plan.fingerprint());
    JsonObject t = plan.totals();
    ByteBuffer payload = ByteBuffer.allocate(1 + 8 + 1 + 12 + fingerprint.length)
        .put(FORMAT).putLong(plan.expiresAt()).put((byte) (plan.removes() ? 1 : 0))
        .putInt(t.getInteger("inserted", 0)).putInt(t.getInteger("updated", 0)).putInt(t.getInteger("deleted", 0))
        .put(fingerprint);
    return PREFIX + keys.get().seal(PURPOSE, boundTo(plan.caller(), plan.tool(), plan.inputHash()), payload.array());
  }

  /**
   * The plan, when {@code planId} was signed by this cluster for this caller, tool and canonical
   * input and has not expired; INVALID_PLAN otherwise, saying which.
   */
  public Plan verify(String planId, String caller, String tool, String inputHash, long nowMillis) {
    Plan plan = decode(planId, caller, tool, inputHash);
    if (nowMillis > plan.expiresAt()) {
      throw invalid("The plan_id expired; plan the change again.");
    }
    return plan;
  }

  /** The plan {@code planId} says for this caller, tool and canonical input, expired or not; INVALID_PLAN for anything else. */
  public Plan decode(String planId, String caller, String tool, String inputHash) {
    if (!planId.startsWith(PREFIX)) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
    // the seal cannot tell which of these it is: that is what keeps the binding out of the payload
    byte[] plain = keys.get().open(PURPOSE, boundTo(caller, tool, inputHash), planId.substring(PREFIX.length())).orElseThrow(() ->
        invalid("The plan_id does not verify: it was made for another caller or for other arguments (commit with exactly the"
            + " arguments of the plan, or plan again), was altered, or was signed by another cluster. " + ErrorCode.INVALID_PLAN.hint()));
    try {
      ByteBuffer in = ByteBuffer.wrap(plain);
      if (in.get() != FORMAT) {
        throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
      }
      long expiresAt = in.getLong();
      boolean removes = in.get() != 0;
      JsonObject totals = new JsonObject().put("inserted", in.getInt()).put("updated", in.getInt()).put("deleted", in.getInt());
      byte[] fingerprint = new byte[in.remaining()];
      in.get(fingerprint);
      return new Plan(caller, tool, inputHash, B64.encodeToString(fingerprint), expiresAt, removes, totals);
    } catch (BufferUnderflowException e) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
  }

  private static String boundTo(String caller, String tool, String inputHash) {
    return caller + "\u0000" + tool + "\u0000" + inputHash;
  }

  /** A short stable id of a plan id, stored to make sure a plan commits at most once. */
  public static String planHash(String planId) {
    return Canonical.hash(planId);
  }

  static ToolException invalid(String message) {
    return new ToolException(ErrorCode.INVALID_PLAN, message + " Nothing was written.", new JsonObject().put("argument", "plan_id"));
  }

}
