package dev.tidemark.command;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * Plan ids: {@code p4.} and 33 bytes in base64url, 47 characters in all, because an agent carries
 * a plan id back and pays for it in tokens twice. The bytes are whether the change removes data,
 * the low byte of the signing key's id, the expiry in epoch seconds, three random bytes (two plans
 * of one change are two ids, so committing one never uses up the other), 8 bytes of a keyed hash
 * of the fingerprint of every touched row's before-image, and an HMAC-SHA256 of all that, cut to
 * 16 bytes, under the database's key ring. The caller, the tool and the hash of the canonical
 * arguments are not carried: the MAC covers them, so a plan id verifies only for the caller, tool
 * and arguments it was made for. Any node verifies one with no plan store; nobody alters or forges
 * one; a rotated key keeps verifying plans during its grace period. It is signed, not sealed: the
 * fingerprint covers columns and rows the caller may not read, so the id carries it hashed under
 * the server's key, and nobody can test a guess of those values against it.
 */
public final class PlanCodec {

  static final String PREFIX = "p4.";
  static final String PURPOSE = "plan-id";
  static final String FINGERPRINT_PURPOSE = "plan-fingerprint";
  static final int FINGERPRINT_BYTES = 8;
  private static final int RANDOM_BYTES = 3;
  private static final int MAC_BYTES = 16;
  private static final int SIGNED = 1 + 1 + 4 + RANDOM_BYTES + FINGERPRINT_BYTES;
  private static final int LENGTH = SIGNED + MAC_BYTES;
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();

  /**
   * What a verified plan id says. {@code fingerprint} is the whole fingerprint when a plan is made
   * and its keyed hash once decoded: compare with {@link #sameState}.
   */
  public record Plan(String caller, String tool, String inputHash, String fingerprint, long expiresAt, boolean removes) {}

  private final Supplier<KeyRing> keys;

  public PlanCodec(Supplier<KeyRing> keys) {
    this.keys = keys;
  }

  /** The plan's id; its expiry is kept to the second, rounded down, so a plan never lives longer than it says. */
  public String encode(Plan plan) {
    KeyRing.Key key = keys.get().signing();
    byte[] random = new byte[RANDOM_BYTES];
    RANDOM.nextBytes(random);
    ByteBuffer buf = ByteBuffer.allocate(LENGTH)
        .put((byte) (plan.removes() ? 1 : 0)).put((byte) key.id())
        .putInt((int) (plan.expiresAt() / 1000)).put(random)
        .put(fingerprintTag(key, plan.fingerprint()));
    buf.put(mac(key, buf.array(), plan.caller(), plan.tool(), plan.inputHash()));
    return PREFIX + B64.encodeToString(buf.array());
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
    byte[] raw = null;
    if (planId.startsWith(PREFIX)) {
      try {
        raw = B64D.decode(planId.substring(PREFIX.length()));
      } catch (IllegalArgumentException e) {
        raw = null;
      }
    }
    if (raw == null || raw.length != LENGTH || (raw[0] & ~1) != 0) {
      throw invalid("The plan_id is not one Tidemark issued. " + ErrorCode.INVALID_PLAN.hint());
    }
    byte[] signed = raw;
    byte[] given = Arrays.copyOfRange(raw, SIGNED, LENGTH);
    KeyRing ring = keys.get();
    // only the key id's low byte is carried: every key not retired that shares it is tried
    boolean verified = ring.keys().stream()
        .filter(k -> (byte) k.id() == signed[1] && ring.byId(k.id()).isPresent())
        .anyMatch(k -> MessageDigest.isEqual(mac(k, signed, caller, tool, inputHash), given));
    // the MAC cannot tell which of these it is: that is what keeps the binding out of the id
    if (!verified) {
      throw invalid("The plan_id does not verify: it was made for another caller or for other arguments (commit with exactly the"
          + " arguments of the plan, or plan again), was altered, or was signed by another cluster. " + ErrorCode.INVALID_PLAN.hint());
    }
    ByteBuffer in = ByteBuffer.wrap(raw, 2, SIGNED - 2);
    long expiresAt = Integer.toUnsignedLong(in.getInt()) * 1000L;
    String fingerprint = B64.encodeToString(Arrays.copyOfRange(raw, SIGNED - FINGERPRINT_BYTES, SIGNED));
    return new Plan(caller, tool, inputHash, fingerprint, expiresAt, raw[0] == 1);
  }

  /**
   * Whether {@code fingerprint}, a change's whole fingerprint now, is the state the decoded {@code plan}
   * was made in, under any key of the ring that is not retired (the one that signed it among them).
   */
  public boolean sameState(Plan plan, String fingerprint) {
    byte[] made = B64D.decode(plan.fingerprint());
    KeyRing ring = keys.get();
    return ring.keys().stream().filter(k -> ring.byId(k.id()).isPresent())
        .anyMatch(k -> MessageDigest.isEqual(fingerprintTag(k, fingerprint), made));
  }

  private static byte[] fingerprintTag(KeyRing.Key key, String fingerprint) {
    byte[] whole = B64D.decode(fingerprint);
    return Arrays.copyOf(KeyRing.mac(key, FINGERPRINT_PURPOSE, whole, whole.length), FINGERPRINT_BYTES);
  }

  private static byte[] mac(KeyRing.Key key, byte[] id, String caller, String tool, String inputHash) {
    byte[] bound = (caller + "\u0000" + tool + "\u0000" + inputHash).getBytes(StandardCharsets.UTF_8);
    byte[] message = ByteBuffer.allocate(SIGNED + bound.length).put(id, 0, SIGNED).put(bound).array();
    return Arrays.copyOf(KeyRing.mac(key, PURPOSE, message, message.length), MAC_BYTES);
  }

  /** A short stable id of a plan id, stored to make sure a plan commits at most once. */
  public static String planHash(String planId) {
    return Canonical.hash(planId);
  }

  static ToolException invalid(String message) {
    return new ToolException(ErrorCode.INVALID_PLAN, message + " Nothing was written.", new JsonObject().put("argument", "plan_id"));
  }

}
