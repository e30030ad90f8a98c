package dev.tidemark.console.impl;

import dev.tidemark.command.Proposals;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Approvals: the open proposals of a database, each with its caller, tool, statement and every row
 * it would write (before and after, changed columns marked), and the approve and reject forms for
 * the people who may decide it. Deciding is {@link Proposals}' (as {@code tidemark proposals}): an
 * approval writes exactly the rows shown or nothing, and of two decisions at once, on any nodes,
 * exactly one is recorded.
 */
final class ApprovalsPage {

  private static final Set<String> OPEN = Set.of("pending", "applying");
  /** Decided proposals shown under the open ones. */
  private static final int RECENT = 10;
  static final int MAX_REASON = 4000;

  private final TidemarkConfig config;
  private final Map<String, Proposals> proposals;
  private final Forms forms;
  private final String path;

  ApprovalsPage(TidemarkConfig config, Map<String, Proposals> proposals, Forms forms) {
    this.config = config;
    this.proposals = proposals;
    this.forms = forms;
    this.path = config.console().path();
  }

  private boolean mayDecide(Req r, JsonObject proposal) {
    List<String> tables = proposal.getJsonArray("tables", new JsonArray()).stream().map(String::valueOf).toList();
    return config.forDatabase(r.database()).database().mayDecide(r.person().name(), tables);
  }

  Future<Html> list(Req r) {
    Proposals of = proposals.get(r.database());
    return of.list(null).compose(all -> {
      List<JsonObject> open = new ArrayList<>();
      List<JsonObject> decided = new ArrayList<>();
      for (Object o : all) {
        JsonObject p = (JsonObject) o;
        (OPEN.contains(p.getString("status")) ? open : decided).add(p);
      }
      List<Future<JsonObject>> shown = open.stream()
          .map(p -> mayDecide(r, p) ? of.show(p.getString("proposal_id")) : Future.succeededFuture(p)).toList();
      return Future.all(shown).map(x -> {
        Html h = new Html();
        h.el("p", open.isEmpty() ? "No proposal waits for a decision in database " + r.database() + "."
            : open.size() + (open.size() == 1 ? " proposal waits" : " proposals wait") + " for a decision in database " + r.database() + ".",
            "class", "lead");
        for (Future<JsonObject> f : shown) {
          proposal(h, r, f.result());
        }
        if (!decided.isEmpty()) {
          h.el("h2", "Decided lately").open("table", "class", "decided").open("thead").open("tr").el("th", "proposal").el("th", "status")
              .el("th", "caller").el("th", "tool").el("th", "decided by").el("th", "decided at").el("th", "reason").close("tr")
              .close("thead").open("tbody");
          for (JsonObject p : decided.subList(0, Math.min(RECENT, decided.size()))) {
            h.open("tr", "data-proposal", p.getString("proposal_id"), "data-status", p.getString("status"))
                .el("td", p.getString("proposal_id")).el("td", p.getString("status")).el("td", p.getString("caller"))
                .el("td", p.getString("tool")).el("td", p.getString("decided_by", "")).el("td", p.getString("decided_at", ""))
                .el("td", p.getString("reason", "")).close("tr");
          }
          h.close("tbody").close("table");
        }
        return h;
      });
    });
  }

  /** One open proposal: its summary for everyone, its statement, rows and forms for those who may decide it. */
  private void proposal(Html h, Req r, JsonObject p) {
    String id = p.getString("proposal_id");
    boolean decides = mayDecide(r, p);
    h.open("section", "class", "proposal", "id", "proposal-" + id, "data-proposal", id);
    h.el("h2", "Proposal " + id);
    h.open("dl", "class", "facts");
    fact(h, "caller", p.getString("caller") + " (role " + p.getString("role") + ")");
    fact(h, "tool", p.getString("tool"));
    fact(h, "tables", String.join(", ", p.getJsonArray("tables", new JsonArray()).stream().map(String::valueOf).toList()));
    fact(h, "proposed at", p.getString("created_at"));
    fact(h, "status", p.getString("status"));
    h.close("dl");
    if (!decides) {
      h.el("p", "You (" + r.person().name() + ") are not an approver of every table this proposal touches, so its rows are not shown"
          + " to you and you may not decide it (database.approvers, database.table-approvers).", "class", "note");
      h.close("section");
      return;
    }
    h.el("h3", "Statement").el("pre", statementOf(p), "class", "statement");
    JsonArray rows = p.getJsonArray("rows", new JsonArray());
    h.el("h3", rows.size() == 1 ? "The row it writes" : "The " + rows.size() + " rows it writes");
    rows.forEach(row -> h.add(RowView.of((JsonObject) row)));
    String target = r.database() + "|" + id;
    h.open("div", "class", "decide");
    h.open("form", "method", "post", "action", path + "/approvals/" + id + "/approve?database=" + r.database(), "class", "approve")
        .empty("input", "type", "hidden", "name", Forms.FIELD, "value", forms.token(r.person(), "approve", target))
        .el("button", "Approve and write these rows", "type", "submit", "name", "approve")
        .close("form");
    h.open("form", "method", "post", "action", path + "/approvals/" + id + "/reject?database=" + r.database(), "class", "reject")
        .empty("input", "type", "hidden", "name", Forms.FIELD, "value", forms.token(r.person(), "reject", target))
        .open("label").text("Reason (the proposer's agent reads it) ")
        .open("textarea", "name", "reason", "required", "required", "maxlength", String.valueOf(MAX_REASON), "rows", "2").close("textarea")
        .close("label")
        .el("button", "Reject", "type", "submit", "name", "reject")
        .close("form");
    h.close("div").close("section");
  }

  /**
   * The change as its proposer sent it; for a tool the team defined, its statement and then the
   * arguments its parameters took (those bound from the proposer's identity are not arguments).
   */
  static String statementOf(JsonObject proposal) {
    JsonObject arguments = proposal.getJsonObject("arguments", new JsonObject());
    if (proposal.getValue("named_tool") instanceof JsonObject named) {
      return named.getString("statement", "") + "\narguments of " + named.getString("name", "") + ": " + statement(arguments);
    }
    return statement(arguments);
  }

  /** The SQL where there is one, else the tool's arguments. */
  static String statement(JsonObject arguments) {
    if (arguments.getValue("sql") instanceof String sql) {
      return sql + (arguments.getValue("params") != null ? "\nparams: " + RowView.value(arguments.getValue("params")) : "");
    }
    if (arguments.getValue("statements") instanceof JsonArray statements) {
      List<String> out = new ArrayList<>();
      statements.forEach(s -> out.add(s instanceof JsonObject o ? statement(o) : RowView.value(s)));
      return String.join(";\n", out);
    }
    JsonObject change = arguments.copy();
    // how the commit was made, not what it changes
    List.of("plan_id", "idempotency_key", "confirm").forEach(change::remove);
    return change.encodePrettily();
  }

  private static void fact(Html h, String name, String value) {
    h.el("dt", name).el("dd", value, "data-fact", name);
  }

  /** Refuses, before any form is taken, a person who may not decide the proposal. */
  Future<JsonObject> authorize(Req r, String id) {
    return proposals.get(r.database()).show(id).recover(err -> Future.failedFuture(err instanceof ToolException te
            && te.code() == ErrorCode.NOT_FOUND
        ? new Refusal(404, ErrorCode.NOT_FOUND, "No such proposal", "Database " + r.database() + " has no proposal " + id
            + ". Open the approvals page to see those that wait.")
        : err)).compose(p -> mayDecide(r, p) ? Future.succeededFuture(p) : Future.failedFuture(Refusal.notAllowed(
            "You (" + r.person().name() + ") may not decide proposal " + id + ": you are not an approver of database " + r.database()
                + " (database.approvers) nor of every table it touches (database.table-approvers). Nothing was decided; ask"
                + " someone who is.")));
  }

  Future<Html> approve(Req r, String id) {
    return decided(r, id, proposals.get(r.database()).approve(id, r.person().name()));
  }

  Future<Html> reject(Req r, String id) {
    String reason = r.param("reason", MAX_REASON);
    if (reason == null) {
      return Future.failedFuture(Refusal.badInput("A rejection needs a reason, which the proposer's agent reads. Write one and send"
          + " the form again from the approvals page."));
    }
    return decided(r, id, proposals.get(r.database()).reject(id, r.person().name(), reason));
  }

  /** The page after a decision: what it came to, or why none was made (decided already, on this node or another). */
  private Future<Html> decided(Req r, String id, Future<JsonObject> decision) {
    return decision.recover(err -> Future.failedFuture(err instanceof ToolException te && te.code() == ErrorCode.INVALID_ARGUMENTS
        ? new Refusal(409, ErrorCode.INVALID_ARGUMENTS, "Decided already", te.getMessage() + " Nothing more was done; the approvals"
            + " page shows the decision that was recorded.")
        : err)).map(p -> {
      Html h = new Html().open("section", "class", "decision", "data-proposal", id, "data-status", p.getString("status"));
      h.el("p", "Proposal " + id + " is " + p.getString("status") + ", decided by " + p.getString("decided_by", r.person().name()) + ".",
          "class", "lead");
      if (p.getString("reason") != null) {
        h.open("p").text("Reason: ").el("span", p.getString("reason"), "class", "reason").close("p");
      }
      if (p.getValue("outcome") instanceof JsonObject outcome && outcome.getString("summary") != null) {
        h.open("p").text("Written: ").el("span", outcome.getString("summary"), "class", "outcome").close("p");
      }
      if ("applied".equals(p.getString("status"))) {
        p.getJsonArray("rows", new JsonArray()).forEach(row -> h.add(RowView.of((JsonObject) row)));
      }
      h.open("p").el("a", "Back to the approvals", "href", path + "/approvals?database=" + r.database()).close("p");
      return h.close("section");
    });
  }
}
