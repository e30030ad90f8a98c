package dev.tidemark.command.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.database.SqlErrors;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;

/** What a change failed with, beyond {@link SqlErrors}: the idempotency constraints and the retries of a commit. */
final class ChangeErrors {

  private ChangeErrors() {}

  /** A unique violation on the idempotency row: a concurrent commit with the same key won; running again replays it. */
  static boolean concurrentSameKey(Throwable err) {
    return err instanceof PgException pg && SqlStates.is(err, SqlStates.UNIQUE_VIOLATION) && "idempotency_pkey".equals(pg.getConstraint());
  }

  /** A unique violation on the plan hash: the plan was committed under another idempotency key. */
  static boolean planAlreadyUsed(Throwable err) {
    return err instanceof PgException pg && SqlStates.is(err, SqlStates.UNIQUE_VIOLATION) && "idempotency_plan_hash_key".equals(pg.getConstraint());
  }

  static ToolException planAlreadyCommitted() {
    return new ToolException(ErrorCode.PLAN_CHANGED, "This plan was already committed under another idempotency_key; a plan commits"
        + " at most once. Retry with the key of that commit to get its outcome, or plan the change again. Nothing was written.",
        new JsonObject().put("argument", "plan_id"));
  }

  static Future<ToolException> classify(Pool pool, Throwable err, int attempts) {
    if (err instanceof ToolException te) {
      return Future.succeededFuture(te);
    }
    if (planAlreadyUsed(err)) {
      return Future.succeededFuture(planAlreadyCommitted());
    }
    if (SqlStates.retriable(err)) {
      PgException pg = (PgException) err;
      return Future.succeededFuture(new ToolException(ErrorCode.CONFLICT, "The change conflicted with concurrent changes (SQLSTATE "
          + pg.getSqlState() + ") " + attempts + " times in a row; nothing was written. " + ErrorCode.CONFLICT.hint(),
          new JsonObject().put("sqlstate", pg.getSqlState()).put("attempts", attempts)));
    }
    return SqlErrors.classify(pool, err);
  }
}
