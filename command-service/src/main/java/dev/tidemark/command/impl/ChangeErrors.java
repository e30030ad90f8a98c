package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.query.ReadTool;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/** Classifies what a change failed with, by SQLSTATE, once; never by message text. */
final class ChangeErrors {

  private static final String CONSTRAINT_COLUMNS_SQL = """
      SELECT array_agg(a.attname::text ORDER BY k.ord) AS columns
        FROM pg_constraint c
        JOIN pg_class r ON r.oid = c.conrelid
        JOIN pg_namespace n ON n.oid = r.relnamespace
        CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
       WHERE c.conname = $1 AND n.nspname = $2 AND r.relname = $3""";

  private ChangeErrors() {}

  /** Serialization failures and deadlocks: the whole commit runs again, a bounded number of times. */
  static boolean retriable(Throwable err) {
    return err instanceof PgException pg && ("40001".equals(pg.getSqlState()) || "40P01".equals(pg.getSqlState()));
  }

  /** A unique violation on the idempotency row: a concurrent commit with the same key won; running again replays it. */
  static boolean concurrentSameKey(Throwable err) {
    return err instanceof PgException pg && "23505".equals(pg.getSqlState()) && "idempotency_pkey".equals(pg.getConstraint());
  }

  /** A unique violation on the plan hash: the plan was committed under another idempotency key. */
  static boolean planAlreadyUsed(Throwable err) {
    return err instanceof PgException pg && "23505".equals(pg.getSqlState()) && "idempotency_plan_hash_key".equals(pg.getConstraint());
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
    if (retriable(err)) {
      PgException pg = (PgException) err;
      return Future.succeededFuture(new ToolException(ErrorCode.CONFLICT, "The change conflicted with concurrent changes (SQLSTATE "
          + pg.getSqlState() + ") " + attempts + " times in a row; nothing was written. " + ErrorCode.CONFLICT.hint(),
          new JsonObject().put("sqlstate", pg.getSqlState()).put("attempts", attempts)));
    }
    if (err instanceof PgException pg && pg.getSqlState() != null && pg.getSqlState().startsWith("23")) {
      return constraintViolation(pool, pg);
    }
    return Future.succeededFuture(ReadTool.toToolException(err));
  }

  private static Future<ToolException> constraintViolation(Pool pool, PgException pg) {
    String kind = switch (pg.getSqlState()) {
      case "23505" -> "unique";
      case "23503" -> "foreign-key";
      case "23514" -> "check";
      case "23502" -> "not-null";
      case "23P01" -> "exclusion";
      default -> "integrity";
    };
    String table = pg.getSchema() != null && pg.getTable() != null ? pg.getSchema() + "." + pg.getTable() : pg.getTable();
    JsonObject details = new JsonObject().put("sqlstate", pg.getSqlState()).put("kind", kind);
    if (pg.getConstraint() != null) {
      details.put("constraint", pg.getConstraint());
    }
    if (table != null) {
      details.put("table", table);
    }
    // the server's message names the constraint and never a value; its detail would, so it is left out
    String message = "The change breaks the " + kind + " constraint" + (pg.getConstraint() == null ? "" : " " + pg.getConstraint())
        + (table == null ? "" : " of " + table) + ": " + pg.getErrorMessage() + ". Nothing was written. " + ErrorCode.CONSTRAINT_VIOLATION.hint();
    Future<JsonArray> columns;
    if (pg.getColumn() != null) {
      columns = Future.succeededFuture(new JsonArray().add(pg.getColumn()));
    } else if (pg.getConstraint() != null && pg.getSchema() != null && pg.getTable() != null) {
      columns = pool.preparedQuery(CONSTRAINT_COLUMNS_SQL).execute(Tuple.of(pg.getConstraint(), pg.getSchema(), pg.getTable()))
          .map(rows -> {
            String[] names = rows.size() == 0 ? null : rows.iterator().next().getArrayOfStrings("columns");
            return names == null ? new JsonArray() : new JsonArray(java.util.List.of(names));
          })
          .otherwise(new JsonArray());
    } else {
      columns = Future.succeededFuture(new JsonArray());
    }
    return columns.map(cols -> new ToolException(ErrorCode.CONSTRAINT_VIOLATION, message, details.put("columns", cols)));
  }
}
