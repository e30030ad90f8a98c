package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.ProposalRows;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

/**
 * Proposals ({@code tidemark.proposal}) and their audit, as Tidemark's login: a change to a table
 * of database.approval-tables is kept here, under its proposer's idempotency key, until a person
 * approves or rejects it with {@code tidemark proposals}.
 */
public final class ProposalStore {

  private static final String PROPOSE_SQL = """
      WITH ins AS (
        INSERT INTO tidemark.proposal (id, caller_id, caller_name, pg_role, tool, arguments, idempotency_key, input_hash, fingerprint,
                                       tables, plan)
        VALUES ('prop_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)
        ON CONFLICT (caller_id, idempotency_key) DO NOTHING
        RETURNING id),
      audit AS (INSERT INTO tidemark.proposal_audit (proposal_id, actor, action) SELECT id, $2, 'proposed' FROM ins)
      SELECT id, 'pending' AS status, $7 AS input_hash, true AS created FROM ins
      UNION ALL
      SELECT p.id, p.status, p.input_hash, false FROM tidemark.proposal p
       WHERE p.caller_id = $1 AND p.idempotency_key = $6 AND NOT EXISTS (SELECT 1 FROM ins)""";


  private static final String DECIDE_SQL = """
      WITH d AS (
        UPDATE tidemark.proposal SET status = $2,
               decided_at = CASE WHEN $2 = 'pending' THEN NULL ELSE coalesce(decided_at, now()) END,
               decided_by = CASE WHEN $2 = 'pending' THEN NULL ELSE coalesce(decided_by, $3) END,
               reason = $4, outcome = $5::jsonb
         WHERE id = $1 AND status = ANY($6::text[])
        RETURNING id)
      INSERT INTO tidemark.proposal_audit (proposal_id, actor, action, detail) SELECT id, $3, $7, $8::jsonb FROM d RETURNING proposal_id""";

  private final Pool pool;

  /** @param pool Tidemark's login */
  public ProposalStore(Pool pool) {
    this.pool = pool;
  }

  /**
   * Keeps the change of {@code request} as a proposal under the caller's {@code key}, or finds the
   * one already kept under it, and answers the caller with it: nothing is written yet.
   */
  Future<ToolReply> propose(ToolRequest request, String key, String inputHash, JsonObject proposal) {
    Tuple values = Tuple.tuple().addString(request.caller().id()).addString(request.caller().name()).addString(request.caller().pgRole())
        .addString(request.tool()).addString(request.arguments().encode()).addString(key).addString(inputHash)
        .addString(proposal.getString("fingerprint"))
        .addValue(proposal.getJsonArray("tables").stream().map(String::valueOf).toArray(String[]::new))
        .addValue(proposal.getJsonObject("plan"));
    // a concurrent proposal under the same key commits while this one waits: its row is visible to the statement run again
    return pool.preparedQuery(PROPOSE_SQL).execute(values)
        .compose(rows -> rows.size() > 0 ? Future.succeededFuture(rows) : pool.preparedQuery(PROPOSE_SQL).execute(values))
        .map(rows -> {
      if (rows.size() == 0) {
        throw new ToolException(ErrorCode.CONFLICT, "A concurrent commit with this idempotency_key is being proposed; retry.");
      }
      Row r = rows.iterator().next();
      if (!inputHash.equals(r.getString("input_hash"))) {
        throw new ToolException(ErrorCode.IDEMPOTENCY_CONFLICT, "This idempotency_key was used for a proposal with other arguments;"
            + " use a new key for a new change. Nothing was written.", new JsonObject().put("argument", "idempotency_key"));
      }
      String id = r.getString("id");
      JsonObject plan = proposal.getJsonObject("plan");
      JsonObject out = new JsonObject().put("mode", "proposed").put("proposal_id", id).put("changes", plan.getJsonArray("changes"))
          .put("totals", plan.getJsonObject("totals")).put("confirmation_required", plan.getBoolean("confirmation_required"))
          .put("idempotency_key", key).put("replayed", !r.getBoolean("created"));
      String tables = String.join(", ", proposal.getJsonArray("tables").stream().map(String::valueOf).toList());
      return ToolReply.ok(request.tool() + ": proposed as " + id + " (" + r.getString("status") + ") — the change "
          + proposal.getString("describe") + " and touches " + tables + ", whose changes need a person's approval; nothing was written."
          + " A person approves or rejects it with tidemark proposals; follow it with status and proposal: " + id + ".", out);
    });
  }

  /** The proposal {@code id}; NOT_FOUND when there is none. */
  public Future<JsonObject> find(String id) {
    return pool.preparedQuery(ProposalRows.SELECT + " WHERE p.id = $1").execute(Tuple.of(id)).map(rows -> {
      if (rows.size() == 0) {
        throw new ToolException(ErrorCode.NOT_FOUND, "No proposal has the id " + id + "; tidemark proposals list shows them.");
      }
      return ProposalRows.json(rows.iterator().next());
    });
  }

  /** Every proposal, newest first, or those with {@code status}. */
  public Future<JsonArray> list(String status) {
    return pool.preparedQuery(ProposalRows.SELECT + " WHERE $1::text IS NULL OR p.status = $1 ORDER BY p.created_at DESC, p.id").execute(Tuple.of(status))
        .map(rows -> {
          JsonArray out = new JsonArray();
          rows.forEach(r -> out.add(ProposalRows.json(r)));
          return out;
        });
  }

  /** The audit of proposal {@code id}, oldest step first. */
  public Future<JsonArray> audit(String id) {
    return pool.preparedQuery("SELECT at, actor, action, detail FROM tidemark.proposal_audit WHERE proposal_id = $1 ORDER BY id")
        .execute(Tuple.of(id)).map(rows -> {
          JsonArray out = new JsonArray();
          for (Row r : rows) {
            JsonObject step = new JsonObject().put("at", r.getOffsetDateTime("at").toString()).put("actor", r.getString("actor"))
                .put("action", r.getString("action"));
            if (r.getValue("detail") != null) {
              step.put("detail", r.getValue("detail"));
            }
            out.add(step);
          }
          return out;
        });
  }

  /** Writes one step into the audit: {@code action} by {@code actor}. */
  public Future<Void> note(String id, String actor, String action, JsonObject detail) {
    return pool.preparedQuery("INSERT INTO tidemark.proposal_audit (proposal_id, actor, action, detail) VALUES ($1, $2, $3, $4::jsonb)")
        .execute(Tuple.of(id, actor, action, detail)).mapEmpty();
  }

  /**
   * Moves proposal {@code id} from one of {@code from} to {@code status}, with the audit step
   * {@code action}; false when it was not in one of {@code from} (decided already).
   */
  public Future<Boolean> decide(String id, String status, String by, String reason, JsonObject outcome, String[] from, String action,
      JsonObject detail) {
    return pool.preparedQuery(DECIDE_SQL).execute(Tuple.tuple().addString(id).addString(status).addString(by).addString(reason)
            .addValue(outcome).addValue(from).addString(action).addValue(detail))
        .map(rows -> rows.size() > 0);
  }
}
