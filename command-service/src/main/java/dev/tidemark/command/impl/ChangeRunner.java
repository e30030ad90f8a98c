package dev.tidemark.command.impl;

import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.config.TidemarkConfig.CommandConfig;
import dev.tidemark.contract.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.query.impl.ReadTool;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Transaction;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.Map;
import java.util.function.Function;

/**
 * Plan, then commit. A plan runs the change as the caller's role in a transaction that is rolled
 * back and reads what the database did from the capture triggers. A commit, in one transaction:
 * takes an advisory lock on (caller, idempotency_key), so that concurrent calls with one key, on any
 * node, run one after the other; returns the stored outcome when the key was used; verifies the
 * plan id; runs the change again; and commits only when the fingerprint of the touched rows'
 * before-images equals the plan's, writing the outcome under the key in the same transaction.
 */
public final class ChangeRunner {

  /** Attempts of a commit that fails with a serialization failure or deadlock before CONFLICT. */
  public static final int MAX_ATTEMPTS = 3;

  private static final String LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended($1, 7445337230418421611))";
  private static final String LOOKUP_SQL = "SELECT input_hash, outcome FROM tidemark.idempotency "
      + "WHERE caller = $1 AND key = $2 AND created_at > now() - make_interval(hours => $3::int)";
  private static final String PLAN_USED_SQL = "SELECT 1 FROM tidemark.idempotency WHERE plan_hash = $1";
  private static final String RECORD_SQL = "INSERT INTO tidemark.idempotency (caller, key, input_hash, plan_hash, outcome) "
      + "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (caller, key) DO UPDATE "
      + "SET input_hash = EXCLUDED.input_hash, plan_hash = EXCLUDED.plan_hash, outcome = EXCLUDED.outcome, created_at = now() "
      + "WHERE tidemark.idempotency.created_at <= now() - make_interval(hours => $6::int)";
  private static final String SETTINGS_SQL = "SELECT set_config('tidemark.caller', $1, true), set_config('tidemark.tool', $2, true), "
      + "set_config('tidemark.idempotency_key', $3, true), set_config('tidemark.plan_id', $4, true)";
  public static final String PRUNE_SQL = "DELETE FROM tidemark.idempotency WHERE created_at <= now() - make_interval(hours => $1::int)";

  private final Pool pool;
  private final DatabaseConfig database;
  private final CommandConfig config;
  private final PlanCodec plans;
  private final Map<String, ChangeTool> tools;

  public ChangeRunner(Pool pool, DatabaseConfig database, CommandConfig config, PlanCodec plans, Map<String, ChangeTool> tools) {
    this.pool = pool;
    this.database = database;
    this.config = config;
    this.plans = plans;
    this.tools = tools;
  }

  public Future<ToolReply> run(ToolRequest request) {
    ChangeTool tool = tools.get(request.tool());
    if (tool == null) {
      return Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no change tool named " + request.tool() + "."));
    }
    JsonObject args = request.arguments();
    String planId = args.getString("plan_id");
    String key = args.getString("idempotency_key");
    boolean direct = planId == null && key != null && config.directCommitRoles().contains(request.caller().pgRole());
    if (planId == null && !direct) {
      return plan(request, tool).recover(err -> ChangeErrors.classify(pool, err, 1).compose(Future::failedFuture));
    }
    if (key == null) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "A commit (a call with plan_id) needs an idempotency_key:"
          + " choose one for this change and send the same one on every retry. Nothing was written.",
          new JsonObject().put("argument", "idempotency_key")));
    }
    return commit(request, tool, planId, key, 1);
  }

  // ---- plan ----

  private Future<ToolReply> plan(ToolRequest request, ChangeTool tool) {
    return inTransaction(conn -> asCaller(conn, request, "", "")
        .compose(v -> tool.apply(conn, request.arguments()))
        .compose(affected -> captured(conn, request, affected))
        .map(changes -> new Result<>(changes, false)))
        .map(changes -> {
          long expiresAt = System.currentTimeMillis() + config.planTtlSeconds() * 1000;
          String planId = plans.encode(new PlanCodec.Plan(request.caller().id(), request.tool(),
              Canonical.inputHash(request.tool(), request.arguments()), changes.fingerprint(), expiresAt, changes.removes(),
              changes.totals()));
          JsonObject out = body(changes, "plan").put("plan_id", planId).put("expires_at", Instant.ofEpochMilli(expiresAt).toString());
          String summary = request.tool() + ": plan, nothing written — the change " + changes.describe()
              + (changes.removes() ? "; it removes data, so committing needs the user's consent (confirm: true)" : "")
              + ". Commit with plan_id and an idempotency_key.";
          return ToolReply.ok(summary, out);
        });
  }

  // ---- commit ----

  private Future<ToolReply> commit(ToolRequest request, ChangeTool tool, String planId, String key, int attempt) {
    Caller caller = request.caller();
    JsonObject args = request.arguments();
    String inputHash = Canonical.inputHash(request.tool(), args);
    boolean confirmed = Boolean.TRUE.equals(args.getBoolean("confirm"));
    int retentionHours = (int) Math.min(config.idempotencyRetentionHours(), Integer.MAX_VALUE);
    return inTransaction(conn -> conn.preparedQuery(LOCK_SQL).execute(Tuple.of(caller.id().length() + ":" + caller.id() + key))
        .compose(v -> conn.preparedQuery(LOOKUP_SQL).execute(Tuple.of(caller.id(), key, retentionHours)))
        .compose(stored -> {
          if (stored.size() > 0) {
            var row = stored.iterator().next();
            if (!inputHash.equals(row.getString("input_hash"))) {
              throw new ToolException(ErrorCode.IDEMPOTENCY_CONFLICT, "This idempotency_key was used for a commit with other arguments;"
                  + " use a new key for a new change. Nothing was written.", new JsonObject().put("argument", "idempotency_key"));
            }
            JsonObject outcome = (JsonObject) row.getValue("outcome");
            return Future.succeededFuture(new Result<>(ToolReply.ok(outcome.getString("summary") + " (replayed: the stored outcome of"
                + " this idempotency_key; nothing was changed again)", outcome.getJsonObject("structured").put("replayed", true)), false));
          }
          PlanCodec.Plan plan = planId == null ? null
              : plans.verify(planId, caller.id(), request.tool(), inputHash, System.currentTimeMillis());
          if (plan != null && plan.removes() && !confirmed) {
            throw decisionRequired(request.tool(), ChangeSet.describeTotals(plan.totals()), plan.totals());
          }
          String planHash = planId == null ? null : PlanCodec.planHash(planId);
          Future<Void> unused = planHash == null ? Future.succeededFuture()
              : conn.preparedQuery(PLAN_USED_SQL).execute(Tuple.of(planHash)).compose(used -> used.size() > 0
                  ? Future.failedFuture(ChangeErrors.planAlreadyCommitted()) : Future.succeededFuture());
          return unused
              .compose(v -> asCaller(conn, request, key, planId == null ? "" : planId))
              .compose(v -> tool.apply(conn, args))
              .compose(affected -> captured(conn, request, affected))
              .compose(changes -> {
                if (plan != null && !plan.fingerprint().equals(changes.fingerprint())) {
                  throw new ToolException(ErrorCode.PLAN_CHANGED, "Rows the plan touched changed since the plan (or the change would"
                      + " now touch other rows); nothing was written. Plan the change again, show it to the user, and commit the new plan.",
                      new JsonObject().put("argument", "plan_id"));
                }
                if (plan == null && changes.removes()) {
                  throw new ToolException(ErrorCode.DECISION_REQUIRED, "This change removes data (it " + changes.describe()
                      + "), so it cannot be committed without a plan: plan it (call without idempotency_key), show the plan to the user,"
                      + " and commit it with plan_id and confirm: true. Nothing was written.",
                      new JsonObject().put("reason", "removes_data").put("question", "Allow this change? It " + changes.describe() + "."));
                }
                JsonObject out = body(changes, "commit").put("idempotency_key", key).put("replayed", false);
                if (planId != null) {
                  out.put("plan_id", planId);
                }
                String summary = request.tool() + ": committed — the change " + changes.describe() + ".";
                JsonObject outcome = new JsonObject().put("summary", summary).put("structured", out);
                return conn.query("SET LOCAL ROLE NONE").execute()
                    .compose(x -> conn.preparedQuery(RECORD_SQL).execute(Tuple.of(caller.id(), key, inputHash, planHash, outcome, retentionHours)))
                    .map(x -> new Result<>(ToolReply.ok(summary, out.copy()), true));
              });
        }))
        .recover(err -> {
          if ((ChangeErrors.retriable(err) || ChangeErrors.concurrentSameKey(err)) && attempt < MAX_ATTEMPTS) {
            return commit(request, tool, planId, key, attempt + 1);
          }
          return ChangeErrors.classify(pool, err, attempt).compose(Future::failedFuture);
        });
  }

  static ToolException decisionRequired(String tool, String what, JsonObject totals) {
    return new ToolException(ErrorCode.DECISION_REQUIRED, "This change removes data (it " + what + "). Show the plan to the user and"
        + " commit again with confirm: true only if they agree. Nothing was written.",
        new JsonObject().put("reason", "removes_data").put("tool", tool).put("totals", totals)
            .put("question", "Allow " + tool + "? It " + what + "; removed rows cannot be restored by Tidemark."));
  }

  // ---- shared ----

  /** What a transaction produced, and whether to commit it (otherwise it is rolled back). */
  private record Result<T>(T value, boolean commit) {}

  /**
   * Runs {@code work} in a transaction that is committed only when the work says so, and rolled
   * back otherwise (always for a plan); then resets the session, as the read tools do.
   */
  private <T> Future<T> inTransaction(Function<SqlConnection, Future<Result<T>>> work) {
    return pool.withConnection(conn -> conn.begin().compose(tx -> work.apply(conn)
            .compose(result -> finish(tx, result.commit()).map(v -> {
                  if (result.commit()) {
                    CrashPoint.afterCommit();
                  }
                  return result.value();
                }),
                err -> tx.rollback().otherwiseEmpty().compose(v -> Future.<T>failedFuture(err))))
        .eventually(() -> ReadTool.resetSession(conn)));
  }

  private static Future<Void> finish(Transaction tx, boolean commit) {
    return commit ? tx.commit() : tx.rollback();
  }

  /** The caller's role, the statement timeout and the settings the capture triggers record. */
  private Future<Void> asCaller(SqlConnection conn, ToolRequest request, String key, String planId) {
    String setup = "SET LOCAL ROLE " + ReadTool.quoteIdent(request.caller().pgRole())
        + "; SET LOCAL statement_timeout = " + database.statementTimeoutMs();
    return conn.query(setup).execute()
        .compose(v -> conn.preparedQuery(SETTINGS_SQL).execute(Tuple.of(request.caller().name(), request.tool(), key, planId)))
        .mapEmpty();
  }

  /**
   * What the change did, read from the capture triggers. The statement ran as the caller's role,
   * and a role switched inside it (set_config('role', ...) in a function) would make everything it
   * did suspect, so the role is checked first. A tool that reports changed rows while nothing was
   * captured means the table has no capture triggers (the changelog role has not reached it).
   */
  private Future<ChangeSet> captured(SqlConnection conn, ToolRequest request, long affected) {
    return conn.query("SELECT current_user::text").execute().compose(who -> {
      if (!request.caller().pgRole().equals(who.iterator().next().getString(0))) {
        return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED,
            "The change switched its database role; a change runs only as your role. Nothing was written."));
      }
      return conn.query(ChangeSet.SQL).execute().map(ChangeSet::of);
    }).map(changes -> {
      if (affected > 0 && changes.isEmpty()) {
        throw new ToolException(ErrorCode.UNAVAILABLE, "The change touched rows of a table whose changes are not captured yet, so"
            + " Tidemark cannot show or check what it does. The changelog role puts capture on every served table; retry shortly."
            + " Nothing was written.");
      }
      return changes;
    });
  }

  private static JsonObject body(ChangeSet changes, String mode) {
    return new JsonObject().put("mode", mode).put("changes", changes.perTable()).put("totals", changes.totals())
        .put("samples", changes.samples()).put("confirmation_required", changes.removes());
  }
}
