package dev.tidemark.gateway.impl.task;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.gateway.impl.service.ResultRenderer;
import io.vertx.core.json.JsonObject;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a proposal's task comes to once a person decided: approved, the commit's own outcome (its
 * result exactly as the change tool answers a commit); rejected, stale, void or failed, a tool
 * error that carries the reason. Each is a {@code completed} task: the tool ran and answered, and
 * the extension keeps {@code failed} for protocol errors. {@code result} is null while the
 * proposal waits, with a {@code note} when its state could not be read.
 */
record ProposalOutcome(JsonObject result, String note) {

  /** A decision's reason as tidemark proposals records it: the error code, a colon, the message. */
  private static final Pattern REASON = Pattern.compile("([A-Z_]+): (.*)", Pattern.DOTALL);

  static ProposalOutcome of(String tool, String proposalId, ToolReply reply) {
    if (reply.isError()) {
      if (ErrorCode.NOT_FOUND.code().equals(reply.error().getString("code"))) {
        return failed(tool, ErrorCode.NOT_FOUND, "Proposal " + proposalId + " no longer exists, and nothing of it is written.",
            proposalId, "gone");
      }
      return new ProposalOutcome(null, "Its state could not be read just now (" + reply.error().getString("code") + "); ask again.");
    }
    JsonObject p = reply.structured();
    String status = p.getString("status", "pending");
    String reason = p.getString("reason");
    return switch (status) {
      case "applied" -> {
        JsonObject outcome = p.getJsonObject("outcome", new JsonObject());
        String summary = outcome.getString("summary", tool + ": committed.");
        yield new ProposalOutcome(ResultRenderer.render(tool, ToolReply.ok(summary + " A person approved proposal " + proposalId + ".",
            outcome.getJsonObject("result", new JsonObject()))), "A person approved proposal " + proposalId + ", and the change was written.");
      }
      case "rejected" -> failed(tool, ErrorCode.PROPOSAL_REJECTED, "A person rejected proposal " + proposalId
          + (reason == null || reason.isBlank() ? "" : ", saying: " + reason) + ". Nothing was written.", proposalId, status);
      case "stale", "void", "failed" -> {
        Matcher m = REASON.matcher(reason == null ? "" : reason);
        ErrorCode fallback = "stale".equals(status) ? ErrorCode.PROPOSAL_STALE : "void".equals(status) ? ErrorCode.PROPOSAL_VOID : ErrorCode.INTERNAL;
        ErrorCode code = m.matches() ? ErrorCode.of(m.group(1)).orElse(fallback) : fallback;
        String why = m.matches() ? m.group(2) : reason == null ? "" : reason;
        String message = "failed".equals(status)
            ? "Proposal " + proposalId + " failed when a person approved it, and nothing was written: " + why
            : why.isBlank() ? "Proposal " + proposalId + " is " + status + "; nothing was written." : why;
        yield failed(tool, code, message, proposalId, status);
      }
      default -> new ProposalOutcome(null, null); // pending, or an approval in progress
    };
  }

  private static ProposalOutcome failed(String tool, ErrorCode code, String message, String proposalId, String status) {
    ToolException e = new ToolException(code, message, new JsonObject().put("proposal_id", proposalId).put("proposal_status", status));
    return new ProposalOutcome(ResultRenderer.render(tool, ToolReply.failed(e)), "Proposal " + proposalId + " is " + status + ".");
  }
}
