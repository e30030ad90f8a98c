package dev.tidemark.gateway.impl.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** What a proposal's task comes to for each way a person's decision ends. */
class ProposalOutcomeTest {

  private static ToolReply state(String status, String reason, JsonObject outcome) {
    JsonObject p = new JsonObject().put("proposal_id", "prop_1").put("status", status);
    if (reason != null) {
      p.put("reason", reason);
    }
    if (outcome != null) {
      p.put("outcome", outcome);
    }
    return ToolReply.ok("proposal prop_1 is " + status, p);
  }

  private static JsonObject error(ProposalOutcome o) {
    assertEquals(true, o.result().getBoolean("isError"), o.result()::encode);
    return o.result().getJsonObject("structuredContent").getJsonObject("error");
  }

  @Test
  void anApprovedProposalCompletesWithTheCommitsOwnResult() {
    JsonObject commit = new JsonObject().put("mode", "commit").put("idempotency_key", "k").put("replayed", false);
    ProposalOutcome o = ProposalOutcome.of("update_rows", "prop_1", state("applied", null,
        new JsonObject().put("summary", "update_rows: committed — the change updates 1 row.").put("result", commit)));
    assertNull(o.result().getValue("isError"));
    assertEquals(commit, o.result().getJsonObject("structuredContent"));
    assertTrue(o.result().getJsonArray("content").getJsonObject(0).getString("text").startsWith("update_rows: committed"));
  }

  @Test
  void aRejectionIsAToolErrorThatCarriesThePersonsReason() {
    JsonObject e = error(ProposalOutcome.of("update_rows", "prop_1", state("rejected", "too high", null)));
    assertEquals(ErrorCode.PROPOSAL_REJECTED.code(), e.getString("code"));
    assertTrue(e.getString("message").contains("too high"), e::encode);
    assertEquals("prop_1", e.getString("proposal_id"));
    assertEquals("rejected", e.getString("proposal_status"));
  }

  @Test
  void staleVoidAndFailedCarryTheCodeAndMessageTheirReasonOpensWith() {
    JsonObject stale = error(ProposalOutcome.of("update_rows", "prop_1", state("stale",
        "PROPOSAL_STALE: Proposal prop_1 is stale: what it showed is no longer what it would write (public.s: amount)", null)));
    assertEquals("PROPOSAL_STALE", stale.getString("code"));
    assertTrue(stale.getString("message").startsWith("Proposal prop_1 is stale"), stale::encode);
    assertEquals("PROPOSAL_VOID", error(ProposalOutcome.of("update_rows", "prop_1", state("void", "PROPOSAL_VOID: gone", null))).getString("code"));
    JsonObject failed = error(ProposalOutcome.of("update_rows", "prop_1", state("failed", "CONSTRAINT_VIOLATION: duplicate key", null)));
    assertEquals("CONSTRAINT_VIOLATION", failed.getString("code"));
    assertTrue(failed.getString("message").contains("failed when a person approved it") && failed.getString("message").contains("duplicate key"));
  }

  @Test
  void aPendingProposalOrAnUnreadableStateLeavesTheTaskWorking() {
    assertNull(ProposalOutcome.of("update_rows", "prop_1", state("pending", null, null)).result());
    ProposalOutcome unread = ProposalOutcome.of("update_rows", "prop_1", ToolReply.failed(new ToolException(ErrorCode.UNAVAILABLE, "down")));
    assertNull(unread.result());
    assertTrue(unread.note().contains("UNAVAILABLE"));
    assertEquals("NOT_FOUND", error(ProposalOutcome.of("update_rows", "prop_1",
        ToolReply.failed(new ToolException(ErrorCode.NOT_FOUND, "none")))).getString("code"));
  }
}
