package dev.tidemark.command.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.CallerSessions.Outcome;
import dev.tidemark.database.CallerSessions.Session;
import dev.tidemark.database.RunningStatements;
import dev.tidemark.database.SqlErrors;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.CommandConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.Digests;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.database.ValueFaults;
import dev.tidemark.command.Canonical;
import dev.tidemark.command.PlanCodec;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.Map;

/**
 * Plan, then commit. A plan runs the change on a connection logged in as the caller's role, in a
 * transaction that is rolled back, and reads what the database did from the plan triggers. A
 * commit first looks the idempotency key up (as Tidemark's login) and returns the stored outcome
 * when the key was used; then verifies the plan id, runs the change again as the caller, and
 * commits only when the fingerprint of the touched rows' before-images equals the plan's. The
 * outcome goes under the key, with who made the change, in the change's own transaction, through
 * {@code tidemark.record_commit}, which takes only a MAC of the server over the transaction id:
 * the unique key makes two concurrent commits with one key, on any node, wait for each other, and
 * the one that comes second runs again and replays the first one's outcome.
 */
public final class ChangeRunner {

  /** Attempts of a commit that fails with a serialization failure or deadlock before CONFLICT. */
  public static final int MAX_ATTEMPTS = 3;

  /**
   * The outcome stored under (caller, key), and whether the plan id was committed under any key,
   * in one snapshot: read apart, a concurrent commit with the same key and plan could land between
   * the two reads and look like a plan committed under another key.
   */
  private static final String LOOKUP_SQL = """
      SELECT k.input_hash, k.outcome, EXISTS (SELECT 1 FROM tidemark.idempotency p WHERE p.plan_hash = $4) AS plan_used
        FROM (SELECT 1) one
        LEFT JOIN tidemark.idempotency k
          ON k.caller = $1 AND k.key = $2 AND k.created_at > now() - make_interval(hours => $3::int)""";
  private static final String RECORD_SQL = "SELECT tidemark.record_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
  private static final String WHO_SQL = "SELECT current_user::text";
  /**
   * The rows this transaction inserted, updated and deleted in tables that have plan triggers, as
   * PostgreSQL counts them: a statement that turned tidemark.plan off for part of its work (it is a
   * setting, and a caller's SQL can change it) captured fewer, and is refused. Beside it, the same
   * counts for each captured table without a plan trigger (database.unplanned-tables), which no
   * change may write.
   */
  private static final String COUNTED_SQL = """
      SELECT coalesce(sum(pg_stat_get_xact_tuples_inserted(t.tgrelid) + pg_stat_get_xact_tuples_updated(t.tgrelid)
                          + pg_stat_get_xact_tuples_deleted(t.tgrelid)), 0)::bigint, tidemark.unplanned_counts()::text
        FROM pg_trigger t
       WHERE t.tgname = 'tidemark_capture'""";
  public static final String PRUNE_SQL = "DELETE FROM tidemark.idempotency WHERE created_at <= now() - make_interval(hours => $1::int)";

  private final Pool pool;
  private final CallerPools callers;
  private final DatabaseConfig database;
  private final CommandConfig config;
  private final PlanCodec plans;
  private final Map<String, ChangeTool> tools;
  private final Causes causes;
  private final ProposalStore proposals;
  /** The function check a named change tool's statement passes, as execute's does; null: this runner runs none. */
  private final dev.tidemark.database.FunctionGuard functions;

  /**
   * @param pool Tidemark's login: idempotency lookups and the classification of failures
   * @param callers the connections of each caller role, on which every change runs
   */
  public ChangeRunner(Pool pool, CallerPools callers, DatabaseConfig database, CommandConfig config, PlanCodec plans,
      Map<String, ChangeTool> tools, Causes causes) {
    this(pool, callers, database, config, plans, tools, causes, null);
  }

  /** @param functions the function check of the named change tools this runner runs (their definitions come with each request) */
  public ChangeRunner(Pool pool, CallerPools callers, DatabaseConfig database, CommandConfig config, PlanCodec plans,
      Map<String, ChangeTool> tools, Causes causes, dev.tidemark.database.FunctionGuard functions) {
    this.functions = functions;
    this.pool = pool;
    this.callers = callers;
    this.database = database;
    this.config = config;
    this.plans = plans;
    this.tools = tools;
    this.causes = causes;
    this.proposals = new ProposalStore(pool);
  }

  public Future<ToolReply> run(ToolRequest given) {
    ToolRequest request;
    try {
      // a reaction's causation token is the caused_by of its event: from here on it is one
      request = Reactions.causedBy(given, callers.keys());
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    return resolved(request).recover(err -> Future.failedFuture(Reactions.blame(given, err)));
  }

  private Future<ToolReply> resolved(ToolRequest request) {
    ChangeTool tool = tool(request);
    if (tool == null) {
      return Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no change tool named " + request.tool() + "."));
    }
    JsonObject args = request.arguments();
    String planId = args.getString("plan_id");
    String key;
    try {
      key = Causes.key(args);  // a reaction's key comes from its event
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    boolean direct = planId == null && key != null && config.directCommitRoles().contains(request.caller().pgRole());
    if (ToolCatalog.MIGRATE.equals(request.tool()) && !config.migrateRoles().contains(request.caller().pgRole())) {
      // the gateway shows migrate only to these roles; a request that reached this node anyway is refused here too
      return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED, "Your role may not change the schema through"
          + " Tidemark (command.migrate-roles does not name it). Nothing was written."));
    }
    if (planId == null && !direct) {
      // the reaction to a redelivered event, planned again, is its first reaction's outcome: the change was made
      Future<ToolReply> replayed = args.containsKey("caused_by")
          ? lookup(request, key, null).compose(row -> Future.succeededFuture(replay(request, row)))
              .compose(reply -> reply == null ? Future.succeededFuture(null) : acknowledged(request, reply))
              .recover(err -> blamed(request, err).compose(e -> ChangeErrors.classify(pool, e, 1)).compose(Future::failedFuture))
          : Future.succeededFuture(null);
      return replayed.compose(reply -> reply != null ? Future.succeededFuture(reply) : planned(request, tool, 1));
    }
    if (key == null) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "A commit (a call with plan_id) needs an idempotency_key:"
          + " choose one for this change and send the same one on every retry. Nothing was written.",
          new JsonObject().put("argument", "idempotency_key")));
    }
    return commit(request, tool, planId, key, 1, null);
  }

  /**
   * Applies a proposal a person approved, as its proposer: the change runs again, in this
   * transaction, and commits only when every row it writes (cascades and trigger effects included)
   * has exactly the before and after images the proposal showed (PROPOSAL_STALE otherwise, with
   * what differs), under the proposer's idempotency key, so that the proposer's retry replays it
   * and an approval sent twice applies it once. Running it again, rather than writing the shown
   * images, keeps what a commit guarantees: it runs as the proposer's role, with its privileges and
   * policies, fires the tables' triggers once, and is captured and attributed as any commit. Only
   * the rows of plain inserts are written as shown rather than taken again ({@link ShownInserts}):
   * their sequence values and defaults are drawn when they are written.
   */
  public Future<ToolReply> applyApproved(ToolRequest request, Approved approved) {
    ChangeTool tool = tool(request);
    if (tool == null) {
      return Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This version has no change tool named " + request.tool() + "."));
    }
    if (ToolCatalog.MIGRATE.equals(request.tool()) && !config.migrateRoles().contains(request.caller().pgRole())) {
      return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED, "The proposer's role may no longer change the schema"
          + " through Tidemark (command.migrate-roles does not name it). Nothing was written."));
    }
    return commit(request, tool, null, approved.idempotencyKey(), 1, approved);
  }

  /** The change tool {@code request} runs: a named tool's own definition, else the built-in tool of its name; null for none. */
  private ChangeTool tool(ToolRequest request) {
    if (request.named() == null) {
      return tools.get(request.tool());
    }
    dev.tidemark.contract.NamedTool named = request.namedTool();
    return functions == null || named.kind() != dev.tidemark.contract.NamedTool.Kind.CHANGE ? null
        : new NamedChangeTool(functions, named, request.caller());
  }

  /**
   * A proposal a person approved: its id, the proposer's idempotency key, and what it showed: the
   * hash of its rows' images ({@link ChangeSet#imagesHash}, with a migration's schema) and the rows.
   */
  public record Approved(String id, String idempotencyKey, String imagesHash, JsonArray rows) {}

  /** The refusal of an approval whose change would now write {@code now} instead of the rows the proposal showed. */
  static ToolException stale(Approved approved, JsonArray now) {
    JsonArray differences = ShownRows.differences(approved.rows(), now);
    return new ToolException(ErrorCode.PROPOSAL_STALE, "Proposal " + approved.id() + " is stale: what it showed is no longer what"
        + " it would write (" + ShownRows.describe(differences) + "): a row it touches changed since it was shown, or the change"
        + " now takes another value from another table, now(), random(), a sequence or a trigger. Nothing was written. The"
        + " proposer may plan the change again and propose it anew.", new JsonObject().put("differences", differences));
  }

  // ---- plan ----

  /**
   * A plan writes nothing (its transaction always rolls back), so a plan that lost to a concurrent
   * transaction (a deadlock, a serialization failure) is made again, as a commit is, up to
   * {@link #MAX_ATTEMPTS} times in all. A migration's DDL takes strong locks, and may meet another
   * session's in the other order.
   */
  private Future<ToolReply> planned(ToolRequest request, ChangeTool tool, int attempt) {
    return plan(request, tool).recover(err -> SqlStates.retriable(err) && attempt < MAX_ATTEMPTS
        ? planned(request, tool, attempt + 1)
        : blamed(request, err).compose(e -> ChangeErrors.classify(pool, e, attempt)).compose(Future::failedFuture));
  }

  /** The change run as the caller in a transaction that is rolled back, with its samples mapped: a plan, or the rows consent is asked for. */
  private Future<Captured> rolledBack(ToolRequest request, ChangeTool tool) {
    CallerDb db = callers.forCaller(request.caller());
    return CallerSessions.inTransaction(db, from(db, tool), request, database.statementTimeoutMs(), SETUP,
            session -> change(session, db, request, tool, false, null)
                .compose(captured -> captured.withSamples(session.conn()))
                .map(Outcome::rollBack))
        .map(Outcome::value);
  }

  private Future<ToolReply> plan(ToolRequest request, ChangeTool tool) {
    return rolledBack(request, tool)
        .map(captured -> {
          ChangeSet changes = captured.changes();
          // whole seconds: what the plan id carries
          long expiresAt = (System.currentTimeMillis() / 1000 + config.planTtlSeconds()) * 1000;
          String planId = plans.encode(new PlanCodec.Plan(request.caller().id(), request.tool(),
              Canonical.inputHash(request.tool(), request.arguments()), captured.fingerprint(), expiresAt, captured.removes()));
          JsonObject out = body(captured, "plan").put("plan_id", planId).put("expires_at", Instant.ofEpochMilli(expiresAt).toString());
          if (changes.totals().getLong("inserted", 0L) > 0 && !out.containsKey("note")) {
            // a rollback never gives back a sequence value, and restoring one by hand would race other writers
            // (a tool's own note says when its inserts draw none)
            out.put("note", SEQUENCE_NOTE);
          }
          java.util.List<String> approved = protectedTables(captured);
          // the text names the plan, the rows per table and operation and their keys; the rows themselves are in the
          // samples and, when the user is asked, in the question (a host shows the model the text or the structured content)
          String summary = request.tool() + ": plan " + planId + " (expires " + out.getString("expires_at") + "), nothing written"
              + (captured.applied().report() != null && captured.applied().report().describe() != null ? "; it " + captured.describe() : "")
              + (captured.removes() ? "; it removes data: commit only with the user's consent (confirm: true)" : "")
              + (approved.isEmpty() ? "" : "; it touches " + String.join(", ", approved)
                  + ", whose changes need a person's approval, so committing it makes a proposal")
              + (out.getValue("changed_since") instanceof JsonArray since && !since.isEmpty() ? "; " + since.size()
                  + (since.size() == 1 ? " row" : " rows") + " changed again since (changed_since), so it commits only when planned with"
                  + " overwrite: true" : "")
              + ". Commit: the same arguments with plan_id and an idempotency_key."
              + (out.getString("note") == null ? "" : " " + out.getString("note"));
          return ToolReply.ok(summary, out, textBlocks(changes.perOperation(), out));
        });
  }

  // ---- commit ----

  /**
   * One commit: what it was asked, and what follows from that (the hash of its arguments, the hash
   * of its plan id, how long its outcome is kept).
   */
  private record Commit(ToolRequest request, ChangeTool tool, String planId, String key, Approved approved, String inputHash,
      String planHash, int retentionHours) {

    Commit(ToolRequest request, ChangeTool tool, String planId, String key, Approved approved, long retentionHours) {
      this(request, tool, planId, key, approved, Canonical.inputHash(request.tool(), request.arguments()),
          planId == null ? null : PlanCodec.planHash(planId), (int) Math.min(retentionHours, Integer.MAX_VALUE));
    }

    Caller caller() {
      return request.caller();
    }
  }

  /**
   * What a commit's transaction ended with: the reply of a change it committed, or the proposal of
   * a change it rolled back because it waits for a person's approval.
   */
  private record Committed(ToolReply reply, JsonObject proposal) {}

  /**
   * The stored outcome when the key was used; otherwise the plan is checked, the change runs again
   * as the caller and is committed, or proposed. A commit that lost to a concurrent one (the key
   * taken, a serialization failure, a deadlock) runs again, up to {@link #MAX_ATTEMPTS} times.
   */
  private Future<ToolReply> commit(ToolRequest request, ChangeTool tool, String planId, String key, int attempt, Approved approved) {
    Commit commit = new Commit(request, tool, planId, key, approved, config.idempotencyRetentionHours());
    return lookup(request, key, commit.planHash())
        .compose(row -> {
          ToolReply replayed = replay(request, row);
          // a redelivered event's reaction: the stored outcome, and the event acknowledged now if asked
          return replayed != null ? acknowledged(request, replayed) : checkedAndRun(commit, row);
        })
        .recover(err -> {
          if ((err instanceof KeyTaken || SqlStates.retriable(err) || ChangeErrors.concurrentSameKey(err)) && attempt < MAX_ATTEMPTS) {
            return commit(request, tool, planId, key, attempt + 1, approved);
          }
          return blamed(request, err).compose(e -> ChangeErrors.classify(pool, e, attempt)).compose(Future::failedFuture);
        });
  }

  /** The plan checked, the event's lease held, then the change run as the caller; a proposal made of it, or its reply. */
  private Future<ToolReply> checkedAndRun(Commit commit, io.vertx.sqlclient.Row lookedUp) {
    ToolRequest request = commit.request();
    PlanCodec.Plan plan = verifiedPlan(commit);
    if (plan != null && plan.removes() && !Boolean.TRUE.equals(request.arguments().getBoolean("confirm"))) {
      return consentNeeded(request, commit.tool(), plan);
    }
    if (Boolean.TRUE.equals(lookedUp.getBoolean("plan_used"))) {
      throw ChangeErrors.planAlreadyCommitted();
    }
    CallerDb db = callers.forCaller(commit.caller());
    ShownInserts asShown = commit.approved() == null ? null : new ShownInserts(commit.approved().rows());
    return leased(commit)
        .compose(held -> CallerSessions.inTransaction(db, from(db, commit.tool()), request, database.statementTimeoutMs(), SETUP,
            session -> change(session, db, request, commit.tool(), true, asShown).compose(captured -> decided(commit, plan, session, captured))))
        .map(this::afterCommit)
        .compose(done -> done.reply() != null ? Future.succeededFuture(done.reply())
            : proposals.propose(request, commit.key(), commit.inputHash(), done.proposal()))
        // a reaction that became a proposal handled its event too: the approval decides when it is applied
        .compose(reply -> acknowledged(request, reply));
  }

  /** The plan a commit names, verified (signed for this caller, tool and arguments, not expired); null for a commit without a plan. */
  private PlanCodec.Plan verifiedPlan(Commit commit) {
    return commit.planId() == null ? null
        : plans.verify(commit.planId(), commit.caller().id(), commit.request().tool(), commit.inputHash(), System.currentTimeMillis());
  }

  /**
   * A reaction commits only while its event's lease is held: else someone else may be reacting to
   * it (a person's approval comes later, and binds the change to the rows it was proposed for instead).
   */
  private Future<Void> leased(Commit commit) {
    return commit.request().arguments().containsKey("caused_by") && commit.approved() == null
        ? causes.held(commit.request()) : Future.succeededFuture();
  }

  /**
   * What the change, run again, decides: rolled back as stale, changed since its plan or removing
   * data without one; rolled back as a proposal when it touches tables that need a person's
   * approval; otherwise recorded under its key and committed.
   */
  private Future<Outcome<Committed>> decided(Commit commit, PlanCodec.Plan plan, Session session, Captured captured) {
    Approved approved = commit.approved();
    if (approved != null && !captured.images().equals(approved.imagesHash())) {
      // rolled back: the rows as they would now be written, for the reason
      return captured.withImages(session.conn()).map(now -> {
        throw stale(approved, now.changes().rows());
      });
    }
    if (plan != null && !plans.sameState(plan, captured.fingerprint())) {
      throw planChanged();
    }
    if (plan == null && approved == null && captured.removes()) {
      throw new ToolException(ErrorCode.DECISION_REQUIRED, "This change removes data (it " + captured.describe()
          + "), so it cannot be committed without a plan: plan it (call without idempotency_key), show the plan to the user,"
          + " and commit it with plan_id and confirm: true. Nothing was written.",
          new JsonObject().put("reason", "removes_data").put("question", "Allow this change? It " + captured.describe() + "."));
    }
    java.util.List<String> needApproval = approved == null ? protectedTables(captured) : java.util.List.of();
    if (!needApproval.isEmpty()) {
      return proposal(session, captured, needApproval).map(proposal -> Outcome.rollBack(new Committed(null, proposal)));
    }
    return recorded(commit, session, captured).map(reply -> Outcome.commit(new Committed(reply, null)));
  }

  /**
   * Rolled back: the change waits for a person, who applies it as this caller (tidemark
   * proposals), with every row mapped as reads show rows: what the people who decide see, and what
   * the approval must write.
   */
  private static Future<JsonObject> proposal(Session session, Captured captured, java.util.List<String> needApproval) {
    return captured.withImages(session.conn()).map(shown -> new JsonObject().put("fingerprint", shown.fingerprint())
        .put("tables", new JsonArray(needApproval)).put("plan", body(shown, "plan")).put("describe", shown.describe())
        .put("rows", shown.changes().rows()).put("images_hash", shown.images()));
  }

  /**
   * The outcome stored under the caller's key, with who made the change, in the change's own
   * transaction ({@code tidemark.record_commit}, under the server's MAC over the transaction id); a
   * plan committed meanwhile under another key is refused, and a key a concurrent commit took runs again.
   */
  private Future<ToolReply> recorded(Commit commit, Session session, Captured captured) {
    ToolRequest request = commit.request();
    Caller caller = commit.caller();
    // what was committed, not the plan again: the caller holds the plan, and samples and plan id would double the answer
    JsonObject out = body(captured, "commit").put("idempotency_key", commit.key()).put("replayed", false);
    String summary = request.tool() + ": committed — the change " + captured.describe() + ".";
    String outcome = new JsonObject().put("summary", summary).put("structured_text", out.encode()).encode();
    // an applied proposal names itself where a plan id goes: the attribution, and changes_since, show it
    String recordedPlan = commit.approved() != null ? dev.tidemark.contract.ChangeCause.PROPOSAL_PREFIX + commit.approved().id()
        : commit.planId();
    String[] fields = {caller.id(), caller.name(), commit.key(), commit.inputHash(), commit.planHash(), recordedPlan, request.tool(),
        outcome};
    StringBuilder message = new StringBuilder("record|").append(captured.xid());
    for (String f : fields) {
      message.append('|').append(Digests.sha256Hex(f));
    }
    message.append('|').append(commit.retentionHours());
    Tuple record = Tuple.tuple();
    for (String f : fields) {
      record.addString(f);
    }
    record.addInteger(commit.retentionHours()).addString(callers.forCaller(caller).keys().ring().sqlMac(message.toString()));
    return session.conn().preparedQuery(RECORD_SQL).execute(record).map(rows -> switch (rows.iterator().next().getString(0)) {
      case "recorded" -> ToolReply.ok(summary, out.copy(), textBlocks(new JsonArray(), out));
      case "plan_used" -> throw ChangeErrors.planAlreadyCommitted();
      // a concurrent commit took the key first and committed: running again replays it
      default -> throw new KeyTaken();
    });
  }

  /** Once a change committed, the moment the crash-safety test may halt the node, before the reply is sent. */
  private Committed afterCommit(Outcome<Committed> done) {
    if (done.commit()) {
      CrashPoint.afterCommit();
    }
    return done.value();
  }

  /** The tables of database.approval-tables that a change touched (its rows, or a migration's tables). */
  private java.util.List<String> protectedTables(Captured captured) {
    if (database.approvalTables().isEmpty()) {
      return java.util.List.of();  // the common case costs every commit nothing
    }
    java.util.Set<String> touched = new java.util.TreeSet<>();
    captured.changes().perTable().forEach(t -> touched.add(((JsonObject) t).getString("table")));
    ChangeTool.Report report = captured.applied().report();
    if (report != null && report.fields().getValue("tables") instanceof JsonArray tables) {
      // a renamed table is checked under both names: renaming a protected table needs the approval its changes need
      tables.forEach(t -> {
        touched.add(((JsonObject) t).getString("table"));
        if (((JsonObject) t).getString("renamed_from") != null) {
          touched.add(((JsonObject) t).getString("renamed_from"));
        }
      });
    }
    return touched.stream().filter(database::needsApproval).toList();
  }

  /** The outcome stored under the caller's {@code key}, and whether the plan was committed under any key, in one row. */
  private Future<io.vertx.sqlclient.Row> lookup(ToolRequest request, String key, String planHash) {
    int retentionHours = (int) Math.min(config.idempotencyRetentionHours(), Integer.MAX_VALUE);
    return pool.preparedQuery(LOOKUP_SQL).execute(Tuple.of(request.caller().id(), key, retentionHours, planHash))
        .map(rows -> rows.iterator().next());
  }

  /**
   * The stored outcome of the lookup's {@code row} as a replayed reply; null when nothing is
   * stored; IDEMPOTENCY_CONFLICT when the key was used for other arguments.
   */
  private static ToolReply replay(ToolRequest request, io.vertx.sqlclient.Row row) {
    if (row.getString("input_hash") == null) {
      return null;
    }
    if (!Canonical.inputHash(request.tool(), request.arguments()).equals(row.getString("input_hash"))) {
      throw new ToolException(ErrorCode.IDEMPOTENCY_CONFLICT, "This idempotency_key was used for a commit with other arguments;"
          + " use a new key for a new change. Nothing was written.", new JsonObject().put("argument", "idempotency_key"));
    }
    JsonObject outcome = (JsonObject) row.getValue("outcome");
    JsonObject stored = storedResult(outcome).put("replayed", true);
    return ToolReply.ok(outcome.getString("summary") + " (replayed: the stored outcome of this idempotency_key; nothing was changed"
        + " again)", stored, textBlocks(new JsonArray(), stored));
  }

  /**
   * {@code reply}, with the event of {@code caused_by} acknowledged first when it asks for it
   * ({@code ack: true}): {@code acknowledged}, and {@code ack_error} when the acknowledgement failed
   * (the change stays committed; the event comes again, and its reaction replays).
   */
  private Future<ToolReply> acknowledged(ToolRequest request, ToolReply reply) {
    JsonObject cause = request.arguments().getJsonObject("caused_by");
    if (cause == null || !Boolean.TRUE.equals(cause.getBoolean("ack"))) {
      return Future.succeededFuture(reply);
    }
    return causes.acknowledge(request).map(failure -> {
      reply.structured().put("acknowledged", failure == null);
      if (failure != null) {
        reply.structured().put("ack_error", failure);
      }
      return reply;
    });
  }

  /**
   * The result stored with an outcome. It is kept as its JSON text because the outcome column is
   * jsonb, which sorts keys: the replay shows the sample images in column order, as the commit did.
   * Outcomes stored before that hold the result as an object.
   */
  private static JsonObject storedResult(JsonObject outcome) {
    String text = outcome.getString("structured_text");
    return text != null ? new JsonObject(text) : outcome.getJsonObject("structured");
  }

  /** A concurrent commit with the same key committed first. */
  private static final class KeyTaken extends RuntimeException {
    KeyTaken() {
      super("a concurrent commit took the idempotency key", null, false, false);
    }
  }

  private static ToolException planChanged() {
    return new ToolException(ErrorCode.PLAN_CHANGED, "Rows the plan touched changed since the plan (or the change would"
        + " now touch other rows); nothing was written. Plan the change again, show it to the user, and commit the new plan.",
        new JsonObject().put("argument", "plan_id"));
  }

  /**
   * The refusal of a commit of a plan that removes data, without confirm. The plan id carries no
   * rows, so the change runs again, rolled back, for the rows the person who decides is asked about
   * (the question the gateway elicits): its samples, one line each, after its counts.
   */
  private Future<ToolReply> consentNeeded(ToolRequest request, ChangeTool tool, PlanCodec.Plan plan) {
    return rolledBack(request, tool)
        .map(captured -> {
          if (!plans.sameState(plan, captured.fingerprint())) {
            throw planChanged();
          }
          ChangeSet changes = captured.changes();
          StringBuilder rows = new StringBuilder();
          for (Object o : changes.samples()) {
            JsonObject s = (JsonObject) o;
            rows.append('\n').append(s.getString("op")).append(' ').append(s.getString("table"))
                .append(s.containsKey("key") ? " " + Json.encode(s.getValue("key")) : "")
                .append(s.containsKey("before") ? " " + s.getJsonObject("before").encode() : "")
                .append(s.containsKey("after") ? " -> " + s.getJsonObject("after").encode() : "");
          }
          // a migration removes columns and tables, not rows its plan counted
          String what = captured.describe().equals(ChangeSet.NO_ROWS) ? "removes what its plan lists in lost" : captured.describe();
          throw decisionRequired(request.tool(), what, changes.totals(), rows.length() == 0 ? ""
              : "\nRows it touches (at most " + ChangeSet.SAMPLES_PER_TABLE_AND_OP + " of each table and operation):" + rows);
        });
  }

  static ToolException decisionRequired(String tool, String what, JsonObject totals, String rows) {
    return new ToolException(ErrorCode.DECISION_REQUIRED, "This change removes data (it " + what + "). Show the plan to the user and"
        + " commit again with confirm: true only if they agree. Nothing was written.",
        new JsonObject().put("reason", "removes_data").put("tool", tool).put("totals", totals)
            .put("question", "Allow " + tool + "? It " + what + "; removed rows cannot be restored by Tidemark." + rows));
  }

  // ---- shared ----

  /** What a transaction captured, its id, to which the server's MACs are bound, and what the tool's statement reported. */
  private record Captured(String xid, ChangeSet changes, ChangeTool.Applied applied) {

    /** The same, with the samples mapped for a plan's answer (see {@link ChangeSet#withSamples}). */
    Future<Captured> withSamples(SqlConnection conn) {
      return changes.withSamples(conn).map(mapped -> new Captured(xid, mapped, applied));
    }

    /** The same, with every row mapped for a proposal (see {@link ChangeSet#withImages}). */
    Future<Captured> withImages(SqlConnection conn) {
      return changes.withImages(conn).map(mapped -> new Captured(xid, mapped, applied));
    }

    /** The hash of every row's images ({@link ChangeSet#imagesHash}), with the tool's own fingerprint where it depends on more. */
    String images() {
      ChangeTool.Report r = applied.report();
      return r == null || r.fingerprint() == null ? changes.imagesHash() : Canonical.hash(changes.imagesHash() + "\n" + r.fingerprint());
    }

    /** The captured rows' fingerprint, with the tool's own where it depends on more (a migration on the schema). */
    String fingerprint() {
      ChangeTool.Report r = applied.report();
      return r == null || r.fingerprint() == null ? changes.fingerprint() : Canonical.hash(changes.fingerprint() + "\n" + r.fingerprint());
    }

    boolean removes() {
      return changes.removes() || applied.report() != null && applied.report().removes();
    }

    String describe() {
      ChangeTool.Report r = applied.report();
      return r == null || r.describe() == null ? changes.describe() : r.describe();
    }
  }

  /**
   * What a plan says about values drawn from sequences: the rolled-back plan used them up, so the
   * commit draws new ones.
   */
  static final String SEQUENCE_NOTE = "This plan drew values from sequences (serial and identity columns) and a rollback does not"
      + " give them back: the commit draws new ones, so generated ids differ from the plan's samples. Match rows by other columns, or"
      + " send the ids yourself.";

  /** A value PostgreSQL refused, blamed on its argument once the transaction has ended. */
  private Future<Throwable> blamed(ToolRequest request, Throwable err) {
    return ValueFaults.resolve(callers.forCaller(request.caller()), request, database.statementTimeoutMs(), err);
  }

  /**
   * The pool a change runs on: one that is reset whole after the call for a tool that runs SQL the
   * caller wrote, else one that keeps Tidemark's own statements prepared.
   */
  private static Pool from(CallerDb db, ChangeTool tool) {
    return tool.runsCallerSql() ? db.pool() : db.preparing();
  }

  /**
   * The tool's change, as the caller, and what the database captured of it. The setup, the count
   * before and the tool's first statement go out together (PostgreSQL runs them in that order);
   * a setup that failed aborted the transaction, so the tool failed too: its error is the setup's.
   * An approval's change ({@code shown}: the rows its proposal showed) is written as the tool
   * writes an approved change ({@link ChangeTool#applyApproved}).
   */
  private Future<Captured> change(Session session, CallerDb db, ToolRequest request, ChangeTool tool, boolean commit,
      ShownInserts shown) {
    SqlConnection conn = session.conn();
    // the transaction's id, to which the server's MACs are bound
    Future<String> xid = session.setup().map(rows -> rows.iterator().next().getString(4));
    Future<Counts> before = counted(conn);
    Future<ChangeTool.Applied> applying;
    try {
      applying = shown != null ? tool.applyApproved(conn, request.arguments(), shown) : tool.applyReturning(conn, request.arguments(), commit);
    } catch (RuntimeException e) {
      applying = Future.failedFuture(e);
    }
    Future<ChangeTool.Applied> applied = applying;
    return Future.join(xid, before, applied)
        .transform(x -> xid.failed() ? Future.<ChangeTool.Applied>failedFuture(xid.cause())
            : before.failed() ? Future.<ChangeTool.Applied>failedFuture(before.cause()) : applied)
        .compose(done -> captured(conn, db, request, done, xid.result(), before.result()));
  }

  /**
   * The reads' setup, and the setting that wakes the plan triggers ({@code tidemark_capture}, whose
   * {@code WHEN} every other writer's rows fail at the cost of reading one setting): logical
   * decoding never sees a rolled-back plan, so a plan (and a commit, for its check) reads what its
   * own transaction did from the rows those triggers write. Its fifth column is the transaction's
   * id, which {@link #change} reads.
   */
  static final String SETUP = CallerSessions.SETUP + ", set_config('tidemark.plan', 'on', true), pg_current_xact_id()::text";

  /**
   * The count of {@link #COUNTED_SQL} now. PostgreSQL's per-transaction counts may still hold
   * earlier transactions of the connection that it has not reported yet, so a change compares the
   * counts after it with the counts before it, in the same transaction.
   */
  private static Future<Counts> counted(SqlConnection conn) {
    return conn.preparedQuery(COUNTED_SQL).execute().map(rows -> {
      io.vertx.sqlclient.Row row = rows.iterator().next();
      return new Counts(row.getLong(0), new JsonObject(row.getString(1)));
    });
  }

  /** {@link #COUNTED_SQL}'s reading: rows written in tables with plan triggers, and per table without one. */
  private record Counts(long planned, JsonObject unplanned) {

    /** The tables without a plan trigger whose count grew since {@code before}, sorted. */
    java.util.List<String> unplannedSince(Counts before) {
      return unplanned.fieldNames().stream()
          .filter(table -> unplanned.getLong(table) > before.unplanned.getLong(table, 0L))
          .sorted().toList();
    }
  }

  /**
   * What the change did, read from the capture triggers. The session user is the caller's role;
   * a statement that switched to another role it may use (set_config('role', ...)) is refused, so
   * that a change always ran as the caller's role alone. A tool that reports changed rows while
   * nothing was captured means the table has no capture triggers (the changelog role has not
   * reached it). The role check, the captured changes and the count after go out together; the
   * role is checked first.
   */
  private Future<Captured> captured(SqlConnection conn, CallerDb db, ToolRequest request, ChangeTool.Applied applied, String xid,
      Counts before) {
    long affected = applied.affected();
    Future<String> who = conn.preparedQuery(WHO_SQL).execute().map(rows -> rows.iterator().next().getString(0));
    Future<ChangeSet> read = ChangeSet.read(conn, db.keys().ring().sqlMac("changes|" + xid));
    Future<Counts> counted = counted(conn);
    return Future.join(who, read, counted).transform(x -> {
      if (who.succeeded() && !request.caller().pgRole().equals(who.result())) {
        return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED,
            "The change switched its database role; a change runs only as your role. Nothing was written."));
      }
      return who.failed() ? Future.<Captured>failedFuture(who.cause()) : read.failed() ? Future.<Captured>failedFuture(read.cause())
          : counted.failed() ? Future.<Captured>failedFuture(counted.cause()) : Future.succeededFuture(new Captured(xid, read.result(), applied));
    }).map(captured -> {
      java.util.List<String> unplanned = counted.result().unplannedSince(before);
      if (!unplanned.isEmpty()) {
        throw new ToolException(ErrorCode.TABLE_UNPLANNED, "The change writes rows of " + String.join(", ", unplanned)
            + ", which carr" + (unplanned.size() == 1 ? "ies" : "y") + " no plan trigger (database.unplanned-tables), so Tidemark"
            + " can neither show nor check what it does there. Nothing was written.");
      }
      long after = counted.result().planned();
      if (after - before.planned() > captured.changes().rowChanges()) {
        throw new ToolException(ErrorCode.PERMISSION_DENIED, "The change turned off Tidemark's record of what it does (the setting"
            + " tidemark.plan), so it cannot be shown or checked. Nothing was written.");
      }
      return captured;
    }).map(captured -> {
      if (affected > 0 && captured.changes().isEmpty()) {
        throw new ToolException(ErrorCode.UNAVAILABLE, "The change touched rows of a table whose changes are not captured yet, so"
            + " Tidemark cannot show or check what it does. The changelog role puts capture on every served table; retry shortly."
            + " Nothing was written.");
      }
      return captured;
    });
  }

  /**
   * The rows of a change's text: {@code perOperation} (a plan's rows per table and operation with
   * their keys), then the rows its statement returned, then what a tool reported in rows of its own
   * (a migration's tables, a restore's rows): what the structured content holds, as rows.
   */
  static JsonArray textBlocks(JsonArray perOperation, JsonObject out) {
    JsonArray blocks = new JsonArray().add(perOperation);
    blocks.add(out.getValue("returning") instanceof JsonArray returning ? returning : new JsonArray());
    out.forEach(e -> {
      if (!e.getKey().equals("returning") && !e.getKey().equals("changes") && !e.getKey().equals("samples")
          && e.getValue() instanceof JsonArray a && !a.isEmpty() && a.stream().allMatch(JsonObject.class::isInstance)) {
        blocks.add(a);
      }
    });
    return blocks;
  }

  private static JsonObject body(Captured captured, String mode) {
    ChangeSet changes = captured.changes();
    JsonObject out = new JsonObject().put("mode", mode).put("changes", changes.perTable()).put("totals", changes.totals());
    if ("plan".equals(mode)) {
      out.put("samples", changes.samples());
    }
    out.put("confirmation_required", captured.removes());
    if (captured.applied().returning() != null) {
      out.put("returning", captured.applied().returning());
      if (captured.applied().truncated()) {
        out.put("returning_truncated", true);
      }
    }
    if (captured.applied().report() != null) {
      out.mergeIn(captured.applied().report().fields());
    }
    return out;
  }
}
