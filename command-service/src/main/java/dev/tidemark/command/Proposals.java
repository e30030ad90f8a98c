package dev.tidemark.command;

import dev.tidemark.command.impl.ChangeRunner;
import dev.tidemark.command.impl.ProposalStore;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.KeyRingSource;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.List;

/**
 * What people do with proposals ({@code tidemark proposals}): list, show, approve and reject. No
 * tool reaches this: an agent proposes, and only someone who runs Tidemark's command line with
 * the database's login decides. An approved proposal is applied here, by this process, as its
 * proposer, exactly as it was proposed or not at all: no node has to be running.
 */
public final class Proposals {

  private static final String[] PENDING = {"pending"};
  private static final String[] CLAIMABLE = {"pending", "applying"};
  private static final String[] APPLYING = {"applying"};

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final Pool pool;
  private final ProposalStore store;

  /**
   * @param config one database's view of the config ({@code TidemarkConfig.forDatabase})
   * @param pool Tidemark's login to that database
   */
  public Proposals(Vertx vertx, TidemarkConfig config, Pool pool) {
    this.vertx = vertx;
    this.config = config;
    this.pool = pool;
    this.store = new ProposalStore(pool);
  }

  /** Every proposal, newest first, or those with {@code status} (pending, applied, rejected, failed). */
  public Future<JsonArray> list(String status) {
    return store.list(status);
  }

  /** The proposal, with the plan people decide on and its audit. */
  public Future<JsonObject> show(String id) {
    return store.find(id).compose(p -> store.audit(id).map(audit -> p.put("audit", audit)));
  }

  /** Rejects a pending proposal: nothing of it is ever applied, and its proposer learns why. */
  public Future<JsonObject> reject(String id, String by, String reason) {
    return store.find(id).compose(p -> store.decide(id, "rejected", by, reason, null, PENDING, "rejected",
            reason == null ? null : new JsonObject().put("reason", reason))
        .compose(done -> done ? show(id) : Future.failedFuture(decided(id, p.getString("status")))));
  }

  /**
   * Approves a pending proposal and applies it as its proposer: applied when the rows it touches
   * are as they were proposed, failed (with the reason, for the proposer) when they moved on.
   */
  public Future<JsonObject> approve(String id, String by) {
    // claimed before it is applied, so that no rejection lands between; one left applying (a crash) is approved again
    return store.find(id).compose(p -> store.decide(id, "applying", by, null, null, CLAIMABLE, "approved", null)
        .compose(claimed -> claimed ? apply(p, by).compose(x -> show(id)) : Future.failedFuture(decided(id, p.getString("status")))));
  }

  private Future<Void> apply(JsonObject p, String by) {
    Caller proposer = new Caller(p.getString("caller_id"), p.getString("caller"), p.getString("role"), Access.READ_WRITE, List.of("*"));
    ToolRequest request = new ToolRequest("proposal-" + p.getString("proposal_id"), config.database().name(), p.getString("tool"),
        p.getJsonObject("arguments"), proposer);
    ChangeRunner.Approved approved = new ChangeRunner.Approved(p.getString("proposal_id"), p.getString("idempotency_key"),
        p.getString("fingerprint"));
    return KeyRingSource.start(vertx, pool, config.keysRefreshSeconds()).compose(keys -> {
      CallerPools callers = new CallerPools(vertx, config.database(), keys, CallerPools.Prepared.WRITES);
      // no shapes kept: an approval is rare, and its runner lives for this one change
      CatalogCache shapes = new CatalogCache(pool, config.database().schemas(), 0, config.database().statementTimeoutMs());
      return CommandVerticle.runner(vertx, config, pool, callers, keys, shapes).applyApproved(request, approved)
          .transform(done -> {
            String pid = p.getString("proposal_id");
            boolean retriable = done.failed() && (!(done.cause() instanceof ToolException te) || te.code().retriable());
            // a failure that may pass (a database that did not answer) leaves it pending, to be approved again
            Future<Boolean> recorded = done.succeeded()
                ? store.decide(pid, "applied", by, null, new JsonObject().put("summary", done.result().summary())
                    .put("result", done.result().structured()), APPLYING, "applied", null)
                : store.decide(pid, retriable ? "pending" : "failed", by, reason(done.cause()), null, APPLYING, "failed",
                    new JsonObject().put("error", reason(done.cause())).put("retriable", retriable));
            return recorded.eventually(callers::close).mapEmpty();
          });
    });
  }

  private static String reason(Throwable err) {
    return err instanceof ToolException te ? te.code().code() + ": " + te.getMessage() : "INTERNAL: " + err.getMessage();
  }

  private static ToolException decided(String id, String status) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "Proposal " + id + " is " + status + " already; only a pending proposal is"
        + " approved or rejected.");
  }
}
