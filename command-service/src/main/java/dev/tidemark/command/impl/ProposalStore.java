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
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.function.Function;

/**
 * Proposals ({@code tidemark.proposal}) and their audit, as Tidemark's login: a change to a table
 * of database.approval-tables is kept here, under its proposer's idempotency key, until a person
 * approves or rejects it with {@code tidemark proposals}.
 */
public final class ProposalStore {

  private static final String PROPOSE_SQL = """
      WITH ins AS (
        INSERT INTO tidemark.proposal (id, caller_id, caller_name, pg_role, tool, arguments, idempotency_key, input_hash, fingerprint,
                                       tables, plan, row_images, images_hash)
        VALUES ('prop_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::text::json, $12)
        ON CONFLICT (caller_id, idempotency_key) DO NOTHING
        RETURNING id),
      audit AS (INSERT INTO tidemark.proposal_audit (proposal_id, actor, action) SELECT id, $2, 'proposed' FROM ins)
      SELECT id, 'pending' AS status, $7 AS input_hash, true AS created FROM ins
      UNION ALL
      SELECT p.id, p.status, p.input_hash, false FROM tidemark.proposal p
       WHERE p.caller_id = $1 AND p.idempotency_key = $6 AND NOT EXISTS (SELECT 1 FROM ins)""";


  /**
   * The proposal, locked until the decision on it is recorded: a second decision, from another
   * process or node, waits here and then finds it decided. Beside it, its proposer's standing
   * ({@link ProposerStanding}) and the outcome stored under the proposer's key for its input, if
   * a change was committed under it (by an approval that stopped before it recorded so).
   */
  private static final String LOCK_SQL = "SELECT " + ProposalRows.COLUMNS + ", " + ProposalRows.ROW_COLUMNS + ", "
      + ProposerStanding.COLUMNS + """
      , k.outcome AS stored_outcome
        FROM tidemark.proposal p
        LEFT JOIN tidemark.api_token t ON t.id::text = p.caller_id
        LEFT JOIN tidemark.idempotency k ON k.caller = p.caller_id AND k.key = p.idempotency_key AND k.input_hash = p.input_hash
       WHERE p.id = $1
         FOR UPDATE OF p""";

  /** Records a decision: the proposal's new state, and its steps in the audit, in order. */
  private static final String RECORD_SQL = """
      WITH d AS (
        UPDATE tidemark.proposal SET status = $2,
               decided_at = CASE WHEN $2 = 'pending' THEN NULL ELSE now() END,
               decided_by = CASE WHEN $2 = 'pending' THEN NULL ELSE $3 END,
               reason = $4, outcome = $5::jsonb
         WHERE id = $1
        RETURNING id)
      INSERT INTO tidemark.proposal_audit (proposal_id, actor, action, detail)
      SELECT d.id, $3, s.step ->> 'action', s.step -> 'detail'
        FROM d CROSS JOIN jsonb_array_elements($6::jsonb) WITH ORDINALITY AS s(step, n)
       ORDER BY s.n""";

  /** A proposal locked for a decision: its rows as {@link #find} reads them, the hash of its rows' images, its proposer's standing. */
  public record Locked(JsonObject proposal, String imagesHash, ProposerStanding standing, JsonObject storedOutcome) {}

  /**
   * What a decision comes to: the proposal's new {@code status} ({@code pending} again when it may
   * be approved again), who decided, why, the outcome, and the steps it adds to the audit.
   */
  public record Decision(String status, String by, String reason, JsonObject outcome, List<Step> steps) {}

  /** One step of the audit: {@code action}, and what the people who read it should know ({@code detail}, or null). */
  public record Step(String action, JsonObject detail) {}

  private final Pool pool;

  /** @param pool Tidemark's login */
  public ProposalStore(Pool pool) {
    this.pool = pool;
  }

  /**
   * Where a named tool's proposal keeps what its approval needs besides the arguments: the tool's
   * definition as the proposer called it, and the claims its parameters may be bound from. No
   * argument a caller sends has this name (every input schema is closed).
   */
  public static final String NAMED_KEY = "_named";

  /** The arguments a proposal keeps: a named tool's, with its definition and the proposer's claims under {@link #NAMED_KEY}. */
  static JsonObject storedArguments(ToolRequest request) {
    if (request.named() == null) {
      return request.arguments();
    }
    JsonObject named = new JsonObject().put("tool", request.named());
    if (request.caller().claims() != null) {
      named.put("claims", request.caller().claims());
    }
    return request.arguments().copy().put(NAMED_KEY, named);
  }

  /**
   * Keeps the change of {@code request} as a proposal under the caller's {@code key}, or finds the
   * one already kept under it, and answers the caller with it: nothing is written yet.
   */
  Future<ToolReply> propose(ToolRequest request, String key, String inputHash, JsonObject proposal) {
    Tuple values = Tuple.tuple().addString(request.caller().id()).addString(request.caller().name()).addString(request.caller().pgRole())
        .addString(request.tool()).addString(storedArguments(request).encode()).addString(key).addString(inputHash)
        .addString(proposal.getString("fingerprint"))
        .addValue(proposal.getJsonArray("tables").stream().map(String::valueOf).toArray(String[]::new))
        .addValue(proposal.getJsonObject("plan")).addString(proposal.getJsonArray("rows").encode())
        .addString(proposal.getString("images_hash"));
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
      String status = r.getString("status");
      // a retry under the key of a proposal that was decided is answered with that proposal: a new one needs a new key
      String decided = switch (status) {
        case "pending", "applying" -> " A person approves or rejects it with tidemark proposals; follow it with status and proposal: "
            + id + ".";
        default -> " This idempotency_key's proposal is " + status + " already (status with proposal: " + id + " says why); to"
            + " propose the change again, plan it again and commit it with a new idempotency_key.";
      };
      return ToolReply.ok(request.tool() + ": proposed as " + id + " (" + status + ") — the change "
          + proposal.getString("describe") + " and touches " + tables + ", whose changes need a person's approval; nothing was written."
          + decided, out);
    });
  }

  /** The proposal {@code id}, with every row it writes; NOT_FOUND when there is none. */
  public Future<JsonObject> find(String id) {
    return pool.preparedQuery("SELECT " + ProposalRows.COLUMNS + ", " + ProposalRows.ROW_COLUMNS + " FROM tidemark.proposal p WHERE p.id = $1")
        .execute(Tuple.of(id)).map(rows -> {
      if (rows.size() == 0) {
        throw notFound(id);
      }
      return ProposalRows.json(rows.iterator().next());
    });
  }

  /**
   * How the caller's proposal {@code id} stands, as the task that follows it reads it: its
   * {@code status}, {@code reason}, {@code decided_at}, {@code decided_by} and whole {@code outcome}
   * (an applied proposal's is the commit's result); NOT_FOUND, as for an id that does not exist,
   * when it is another caller's.
   */
  public Future<ToolReply> stateFor(ToolRequest request) {
    Object id = request.arguments().getValue("proposal_id");
    return pool.preparedQuery(ProposalRows.SELECT + " WHERE p.id = $1 AND p.caller_id = $2")
        .execute(Tuple.of(id instanceof String s ? s : "", request.caller().id())).map(rows -> {
          if (rows.size() == 0) {
            throw new ToolException(ErrorCode.NOT_FOUND, "None of your proposals has the id " + id + ".");
          }
          JsonObject p = ProposalRows.json(rows.iterator().next());
          JsonObject state = new JsonObject();
          for (String field : new String[] {"proposal_id", "status", "tool", "decided_at", "decided_by", "reason", "outcome"}) {
            if (p.containsKey(field)) {
              state.put(field, p.getValue(field));
            }
          }
          return ToolReply.ok("proposal " + p.getString("proposal_id") + " is " + p.getString("status"), state);
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

  /**
   * Locks proposal {@code id}, asks {@code decide} what to do with it, and records the decision,
   * in one transaction of Tidemark's login, so that of two decisions at once exactly one is
   * recorded and the second sees it: {@code decide} fails to record nothing (a proposal decided
   * already). NOT_FOUND when there is no such proposal.
   */
  public Future<Decision> decide(String id, Function<Locked, Future<Decision>> decide) {
    return pool.withTransaction(conn -> conn.preparedQuery(LOCK_SQL).execute(Tuple.of(id)).compose(rows -> {
      if (rows.size() == 0) {
        throw notFound(id);
      }
      Row r = rows.iterator().next();
      return decide.apply(new Locked(ProposalRows.json(r), r.getString("images_hash"), ProposerStanding.of(r),
              (JsonObject) r.getValue("stored_outcome")))
          .compose(d -> record(conn, id, d).map(d));
    }));
  }

  private static Future<Void> record(SqlConnection conn, String id, Decision d) {
    JsonArray steps = new JsonArray();
    for (Step step : d.steps()) {
      JsonObject s = new JsonObject().put("action", step.action());
      if (step.detail() != null) {
        s.put("detail", step.detail());
      }
      steps.add(s);
    }
    return conn.preparedQuery(RECORD_SQL).execute(Tuple.tuple().addString(id).addString(d.status()).addString(d.by())
        .addString(d.reason()).addValue(d.outcome()).addValue(steps)).mapEmpty();
  }

  private static ToolException notFound(String id) {
    return new ToolException(ErrorCode.NOT_FOUND, "No proposal has the id " + id + "; tidemark proposals list shows them.");
  }
}
