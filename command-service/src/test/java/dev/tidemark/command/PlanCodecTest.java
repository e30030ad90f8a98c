package dev.tidemark.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.keys.KeyRing;
import java.util.List;
import dev.tidemark.contract.ToolException;
import org.junit.jupiter.api.Test;

class PlanCodecTest {

  private static final long NOW = 1_700_000_000_000L;
  private static KeyRing ring(int id) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, (byte) id);
    return new KeyRing(List.of(new KeyRing.Key(id, secret, 0, Long.MAX_VALUE)));
  }

  private final PlanCodec codec = new PlanCodec(() -> ring(1));
  private final PlanCodec.Plan plan = new PlanCodec.Plan("caller-1", "delete_rows", "hash-a", Canonical.hash("fp"), NOW + 60_000, true);

  private ToolException refused(String planId, String caller, String tool, String inputHash, long now) {
    ToolException e = assertThrows(ToolException.class, () -> codec.verify(planId, caller, tool, inputHash, now));
    assertEquals(ErrorCode.INVALID_PLAN, e.code());
    assertEquals("plan_id", e.details().getString("argument"));
    return e;
  }

  @Test
  void aPlanIdVerifiesOnAnyCodecWithTheSameKeyRing() {
    String id = codec.encode(plan);
    PlanCodec other = new PlanCodec(() -> ring(1));
    PlanCodec.Plan verified = other.verify(id, "caller-1", "delete_rows", "hash-a", NOW);
    assertEquals(List.of("caller-1", "delete_rows", "hash-a", NOW + 60_000, true),
        List.of(verified.caller(), verified.tool(), verified.inputHash(), verified.expiresAt(), verified.removes()));
    assertTrue(other.sameState(verified, plan.fingerprint()), "the plan's rows are as they were");
    assertFalse(other.sameState(verified, Canonical.hash("another state")), "a row the plan touched changed");
    assertFalse(id.contains(plan.fingerprint().substring(0, 8)), "the fingerprint is carried hashed under the key, not as it is");
    assertFalse(new PlanCodec(() -> ring(2)).sameState(verified, plan.fingerprint()), "only the cluster's key tells the state");
  }

  @Test
  void aPlanThatRemovesNothingSaysSo() {
    String id = codec.encode(new PlanCodec.Plan("caller-1", "update_rows", "hash-a", Canonical.hash("fp"), NOW + 60_000, false));
    assertFalse(codec.verify(id, "caller-1", "update_rows", "hash-a", NOW).removes());
  }

  @Test
  void anExpiryIsKeptToTheSecondRoundedDown() {
    String id = codec.encode(new PlanCodec.Plan("caller-1", "delete_rows", "hash-a", Canonical.hash("fp"), NOW + 60_999, true));
    assertEquals(NOW + 60_000, codec.verify(id, "caller-1", "delete_rows", "hash-a", NOW).expiresAt(), "never later than it was made for");
  }

  @Test
  void aKeyThatSharesTheSigningKeysLowByteButNotItsSecretDoesNotVerify() {
    byte[] other = new byte[32];
    java.util.Arrays.fill(other, (byte) 9);
    KeyRing rotated = new KeyRing(List.of(new KeyRing.Key(257, other, 0, Long.MAX_VALUE)));
    PlanCodec afterRotation = new PlanCodec(() -> rotated);
    ToolException e = assertThrows(ToolException.class, () -> afterRotation.verify(codec.encode(plan), "caller-1", "delete_rows", "hash-a", NOW));
    assertEquals(ErrorCode.INVALID_PLAN, e.code());
  }

  @Test
  void aPlanIdOfTheRetiringKeyVerifiesWhileTheRingStillHoldsIt() {
    byte[] newer = new byte[32];
    java.util.Arrays.fill(newer, (byte) 7);
    byte[] older = new byte[32];
    java.util.Arrays.fill(older, (byte) 1);
    KeyRing both = new KeyRing(List.of(new KeyRing.Key(1, older, 0, Long.MAX_VALUE), new KeyRing.Key(2, newer, 0, Long.MAX_VALUE)));
    String id = codec.encode(plan);
    assertEquals("caller-1", new PlanCodec(() -> both).verify(id, "caller-1", "delete_rows", "hash-a", NOW).caller());
  }

  @Test
  void twoPlansOfOneChangeHaveDifferentIds() {
    assertNotEquals(codec.encode(plan), codec.encode(plan));
  }

  @Test
  void anAlteredPlanIdIsInvalid() {
    String id = codec.encode(plan);
    char[] chars = id.toCharArray();
    chars[10] = chars[10] == 'A' ? 'B' : 'A';
    refused(new String(chars), "caller-1", "delete_rows", "hash-a", NOW);
    refused(id.substring(0, id.length() - 2), "caller-1", "delete_rows", "hash-a", NOW);
    refused("p3.", "caller-1", "delete_rows", "hash-a", NOW);
    refused("garbage", "caller-1", "delete_rows", "hash-a", NOW);
  }

  @Test
  void aPlanIdOfAnotherClusterIsInvalid() {
    String foreign = new PlanCodec(() -> ring(2)).encode(plan);
    assertTrue(refused(foreign, "caller-1", "delete_rows", "hash-a", NOW).getMessage().contains("another cluster"));
  }

  @Test
  void anExpiredPlanIdIsInvalid() {
    assertTrue(refused(codec.encode(plan), "caller-1", "delete_rows", "hash-a", NOW + 60_001).getMessage().contains("expired"));
  }

  @Test
  void aPlanIdIsBoundToItsCallerToolAndArguments() {
    String id = codec.encode(plan);
    assertTrue(refused(id, "caller-2", "delete_rows", "hash-a", NOW).getMessage().contains("another caller"));
    assertTrue(refused(id, "caller-1", "update_rows", "hash-a", NOW).getMessage().contains("other arguments"));
    assertTrue(refused(id, "caller-1", "delete_rows", "hash-b", NOW).getMessage().contains("other arguments"));
  }

  @Test
  void aPlanIdIsAtMost48CharactersBecauseItsBindingIsNotCarried() {
    String id = codec.encode(plan);
    assertTrue(id.length() <= 48, id.length() + " characters: " + id);
    assertTrue(id.matches("p4\\.[A-Za-z0-9_-]+"), "base64url, safe in text and JSON alike: " + id);
  }
}
