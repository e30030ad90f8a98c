package dev.tidemark.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.keys.KeyRing;
import java.util.List;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class PlanCodecTest {

  private static final long NOW = 1_700_000_000_000L;
  private static KeyRing ring(int id) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, (byte) id);
    return new KeyRing(List.of(new KeyRing.Key(id, secret, 0, Long.MAX_VALUE)));
  }

  private final PlanCodec codec = new PlanCodec(() -> ring(1));
  private final PlanCodec.Plan plan = new PlanCodec.Plan("caller-1", "delete_rows", "hash-a", Canonical.hash("fp"), NOW + 60_000, true,
      new JsonObject().put("inserted", 0).put("updated", 0).put("deleted", 3));

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
    assertEquals(plan, other.verify(id, "caller-1", "delete_rows", "hash-a", NOW));
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
  void aPlanIdIsShortBecauseItsBindingIsNotCarried() {
    String id = codec.encode(plan);
    assertTrue(id.length() <= 120, id.length() + " characters: " + id);
  }
}
