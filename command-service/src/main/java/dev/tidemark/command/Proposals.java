package dev.tidemark.command;

import dev.tidemark.command.impl.ChangeRunner;
import dev.tidemark.command.impl.ProposalStore;
import dev.tidemark.command.impl.ProposalStore.Decision;
import dev.tidemark.command.impl.ProposalStore.Step;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.Pools;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.List;

/**
 * What people do with proposals ({@code tidemark proposals}, and any other place people decide):
 * list, show, approve and reject. No tool reaches this: an agent proposes, and only someone who
 * holds the database's login decides. An approved proposal is applied here, by this process, as
 * its proposer, writing exactly the rows it showed or nothing: no node has to be running.
 *
 * <p>Each decision locks its proposal and is recorded in that lock's transaction, so of two
 * decisions at once (two processes, two nodes) exactly one is recorded, and the other is refused.
 * A proposal that would now write other rows or values than it showed becomes {@code stale}, one
 * whose proposer's token ended or whose role may no longer make the change {@code void}; neither
 * writes anything, and the proposer reads either through {@code status}.
 */
public final class Proposals {

  /**
   * The connections of Tidemark's login an approval holds at once: the lock on its proposal, and
   * the idempotency lookup and key ring of the change it runs. A pool for this class needs as many.
   */
  public static final int CONNECTIONS = 2;

  /** What may be approved or rejected: {@code applying} is only ever left by an earlier version's approval that stopped. */
  private static final java.util.Set<String> OPEN = java.util.Set.of("pending", "applying");

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final Pool pool;
  private final ProposalStore store;
  /** The database's key ring when the caller keeps one (a long-lived process); null: each approval reads it. */
  private final KeyRingSource keys;

  /**
   * @param config one database's view of the config ({@code TidemarkConfig.forDatabase})
   * @param pool Tidemark's login to that database, of at least {@link #CONNECTIONS} connections
   */
  public Proposals(Vertx vertx, TidemarkConfig config, Pool pool) {
    this(vertx, config, pool, null);
  }

  /**
   * For a process that decides again and again (the console): approvals use {@code keys}, the
   * database's key ring it keeps fresh, instead of reading and then refreshing a ring of their own.
   */
  public Proposals(Vertx vertx, TidemarkConfig config, Pool pool, KeyRingSource keys) {
    this.vertx = vertx;
    this.config = config;
    this.pool = pool;
    this.store = new ProposalStore(pool);
    this.keys = keys;
  }

  /** Every proposal, newest first, or those with {@code status} (pending, applied, rejected, failed, stale, void). */
  public Future<JsonArray> list(String status) {
    return store.list(status).map(all -> {
      all.forEach(p -> shown((JsonObject) p));
      return all;
    });
  }

  /** The proposal, with every row it writes (before and after), the plan its proposer was shown, and its audit. */
  public Future<JsonObject> show(String id) {
    return store.find(id).compose(p -> store.audit(id).map(audit -> shown(p).put("audit", audit)));
  }

  /**
   * A proposal as people see it: a named tool's definition and the proposer's identity claims, kept
   * with its arguments for the approval, become {@code named_tool} (its name and statement); the
   * claims are the proposer's, not the approver's to read.
   */
  private static JsonObject shown(JsonObject p) {
    if (p.getValue("arguments") instanceof JsonObject arguments
        && arguments.getValue(dev.tidemark.command.impl.ProposalStore.NAMED_KEY) instanceof JsonObject named) {
      JsonObject kept = arguments.copy();
      kept.remove(dev.tidemark.command.impl.ProposalStore.NAMED_KEY);
      JsonObject tool = named.getJsonObject("tool", new JsonObject());
      p.put("arguments", kept).put("named_tool", new JsonObject().put("name", tool.getString("name"))
          .put("statement", tool.getString("statement")));
    }
    return p;
  }

  /**
   * Rejects an open proposal: nothing of it is ever applied, and its proposer learns why. A
   * proposal that an approval committed and stopped before it recorded so is recorded as applied
   * instead, and the rejection refused.
   */
  public Future<JsonObject> reject(String id, String by, String reason) {
    return store.decide(id, locked -> {
      String status = locked.proposal().getString("status");
      if (!OPEN.contains(status)) {
        return Future.failedFuture(decided(id, status));
      }
      if (locked.storedOutcome() != null) {
        return Future.succeededFuture(recovered(locked.storedOutcome(), by));
      }
      return Future.succeededFuture(new Decision("rejected", by, reason, null,
          List.of(new Step("rejected", reason == null ? null : new JsonObject().put("reason", reason)))));
    }).compose(d -> "rejected".equals(d.status()) ? show(id) : Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS,
        "Proposal " + id + " was applied already: an approval wrote it and stopped before it recorded so. It is recorded as applied"
            + " now, and nothing was rejected; tidemark proposals show " + id + " shows what was written.")));
  }

  /**
   * Approves an open proposal and applies it as its proposer, in the same step: {@code applied}
   * when the change writes exactly the rows and values the proposal showed, {@code stale} when it
   * would write anything else, {@code void} when its proposer may no longer make it, {@code failed}
   * when the database refused it for another reason (each with the reason, for the proposer; none
   * writes anything), and {@code pending} again when the failure may pass (a database that did not
   * answer).
   */
  public Future<JsonObject> approve(String id, String by) {
    return store.decide(id, locked -> {
      JsonObject p = locked.proposal();
      if (!OPEN.contains(p.getString("status"))) {
        return Future.failedFuture(decided(id, p.getString("status")));
      }
      if (locked.storedOutcome() != null) {
        // written by an approval that stopped before it recorded so: whatever became of the proposer since, it was applied
        return Future.succeededFuture(recovered(locked.storedOutcome(), by));
      }
      String voided = locked.standing().voidReason(config.database().name(), config.oauth());
      if (voided != null) {
        return Future.succeededFuture(refused(by, "void", new ToolException(ErrorCode.PROPOSAL_VOID, "Proposal " + id + " is void: its"
            + " proposer (" + p.getString("caller") + ") may no longer make changes, since " + voided + "; nothing was written."), null));
      }
      if (locked.imagesHash() == null) {
        return Future.succeededFuture(refused(by, "stale", new ToolException(ErrorCode.PROPOSAL_STALE, "Proposal " + id + " is stale: it was"
            + " made by an earlier version of Tidemark, which kept only samples of the rows it writes, so what it writes cannot be shown"
            + " whole; nothing was written. The proposer may plan the change again and propose it anew."), null));
      }
      return apply(p, new ChangeRunner.Approved(id, p.getString("idempotency_key"), locked.imagesHash(), p.getJsonArray("rows")), by);
    }).compose(d -> show(id));
  }

  /** Runs the approved change as its proposer, and what the approval comes to. */
  private Future<Decision> apply(JsonObject p, ChangeRunner.Approved approved, String by) {
    JsonObject arguments = p.getJsonObject("arguments").copy();
    // a named tool's proposal runs the definition it was proposed under, with the proposer's claims
    JsonObject named = (JsonObject) arguments.remove(dev.tidemark.command.impl.ProposalStore.NAMED_KEY);
    Caller proposer = new Caller(p.getString("caller_id"), p.getString("caller"), p.getString("role"), Access.READ_WRITE, List.of("*"),
        null, named == null ? null : named.getJsonObject("claims"));
    ToolRequest request = new ToolRequest("proposal-" + approved.id(), config.database().name(), p.getString("tool"),
        arguments, proposer, null, null, named == null ? null : named.getJsonObject("tool"));
    Future<KeyRingSource> ring = this.keys != null ? Future.succeededFuture(this.keys) : KeyRingSource.start(vertx, pool, config.keysRefreshSeconds());
    return ring.compose(keys -> {
      CallerPools callers = new CallerPools(vertx, config.database(), keys, CallerPools.Prepared.WRITES);
      // no shapes kept: an approval is rare, and its runner lives for this one change
      CatalogCache shapes = new CatalogCache(pool, config.database().schemas(), 0, config.database().statementTimeoutMs());
      Pool changelog = Pools.changelog(vertx, config.database(), pool);
      return CommandVerticle.runner(vertx, config, pool, changelog, callers, keys, shapes).applyApproved(request, approved)
          .transform(done -> {
            if (done.succeeded()) {
              return Future.succeededFuture(new Decision("applied", by, null, new JsonObject().put("summary", done.result().summary())
                  .put("result", done.result().structured()), List.of(new Step("approved", null), new Step("applied", null))));
            }
            Throwable err = done.cause();
            ErrorCode code = err instanceof ToolException te ? te.code() : ErrorCode.INTERNAL;
            if (code == ErrorCode.PROPOSAL_STALE) {
              return Future.succeededFuture(refused(by, "stale", (ToolException) err, ((ToolException) err).details()));
            }
            if (code == ErrorCode.PERMISSION_DENIED) {
              // PostgreSQL refused the proposer's role (a privilege revoked, a policy): the proposer may not make it
              return Future.succeededFuture(refused(by, "void", new ToolException(ErrorCode.PROPOSAL_VOID, "Proposal " + approved.id()
                  + " is void: its proposer's role " + proposer.pgRole() + " may no longer make this change (" + err.getMessage()
                  + "); nothing was written."), null));
            }
            // a failure that may pass (a database that did not answer) leaves it pending, to be approved again
            String status = code.retriable() ? "pending" : "failed";
            return Future.succeededFuture(new Decision(status, by, reason(err), null, List.of(new Step("approved", null),
                new Step("failed", new JsonObject().put("error", reason(err)).put("retriable", code.retriable())))));
          })
          .eventually(() -> Future.join(callers.close(), Pools.closeChangelog(changelog, pool)));
    });
  }

  /** An approval that wrote nothing and ends the proposal as {@code status}, for the reason of {@code why}. */
  private static Decision refused(String by, String status, ToolException why, JsonObject details) {
    JsonObject detail = new JsonObject().put("error", reason(why));
    if (details != null) {
      detail.mergeIn(details);
    }
    return new Decision(status, by, reason(why), detail.copy(), List.of(new Step("approved", null), new Step(status, detail)));
  }

  /** A proposal whose change an approval committed (its proposer's key holds the outcome), recorded as applied. */
  private static Decision recovered(JsonObject stored, String by) {
    JsonObject outcome = new JsonObject().put("summary", stored.getString("summary"));
    String text = stored.getString("structured_text");
    outcome.put("result", text != null ? new JsonObject(text) : stored.getJsonObject("structured"));
    return new Decision("applied", by, null, outcome, List.of(new Step("applied", new JsonObject()
        .put("note", "an approval wrote it and stopped before it recorded so; found under its proposer's idempotency key"))));
  }

  private static String reason(Throwable err) {
    return err instanceof ToolException te ? te.code().code() + ": " + te.getMessage() : "INTERNAL: " + err.getMessage();
  }

  private static ToolException decided(String id, String status) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "Proposal " + id + " is " + status + " already; only a pending proposal is"
        + " approved or rejected.");
  }
}
