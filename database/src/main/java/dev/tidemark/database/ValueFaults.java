package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.database.SqlParams.Bound;
import dev.tidemark.database.TableCatalog.Column;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * Blames a value PostgreSQL refused (a data exception, SQLSTATE class 22) on the argument and
 * the JSON Pointer it came from. PostgreSQL's error does not say which bound value failed, and its
 * text quotes the value, so on that failure alone each value the caller sent for a column is cast
 * to the column's type by itself, as the caller's role, in a read-only transaction that is rolled
 * back: the first that does not convert is the one at fault. The happy path costs nothing.
 */
public final class ValueFaults {

  /** The most values probed after one failure: a statement with more blames its argument as a whole. */
  static final int MAX_PROBES = 200;

  private ValueFaults() {}

  /**
   * The error for {@code err}: for a data exception, INVALID_ARGUMENTS naming the value's argument
   * and pointer and the form its column takes; {@code fallback} when no single value is at fault
   * (a value that converts alone but not where it is used, such as a string too long for its column).
   */
  public static Future<Throwable> blame(CallerDb db, ToolRequest request, long timeoutMs, Throwable err, SqlParams params,
      String fallback) {
    if (!SqlStates.inClass(err, SqlStates.DATA_EXCEPTION) || params.bound().isEmpty()) {
      return Future.succeededFuture(SqlErrors.argumentError(err, fallback));
    }
    List<Bound> candidates = params.bound().stream().limit(MAX_PROBES).toList();
    return CallerSessions.readOnly(db, request, timeoutMs, conn -> {
      // pipelined on one connection: once one fails the rest fail as aborted, so the first failure is the value at fault
      List<Future<?>> probes = new ArrayList<>();
      for (Bound b : candidates) {
        String cast = b.array() ? "$1::text[]::" + b.column().type() + (b.column().isArray() ? "" : "[]") : "$1::text::" + b.column().type();
        probes.add(conn.preparedQuery("SELECT " + cast).execute(Tuple.of(params.value(b.index()))));
      }
      return Future.join(probes).transform(done -> {
        for (int i = 0; i < probes.size(); i++) {
          if (probes.get(i).failed()) {
            Throwable cause = probes.get(i).cause();
            if (SqlStates.inClass(cause, SqlStates.DATA_EXCEPTION)) {
              return Future.succeededFuture((Throwable) fault(candidates.get(i), SqlStates.of(cause)));
            }
            break;
          }
        }
        return Future.succeededFuture(SqlErrors.argumentError(err, fallback));
      });
    }).otherwise(ignored -> SqlErrors.argumentError(err, fallback));
  }

  /** A value of {@code bound}'s column that PostgreSQL refused with {@code sqlState}. */
  static ToolException fault(Bound bound, String sqlState) {
    ToolException e = SqlParams.fault(bound.argument(), bound.pointer(), expected(bound.column()),
        "PostgreSQL refused it: " + SqlStates.describeDataException(sqlState) + " (SQLSTATE " + sqlState + "). " + ErrorCode.INVALID_ARGUMENTS.hint());
    e.details().put("sqlstate", sqlState).put("column", bound.column().name());
    return e;
  }

  /** What a value of {@code column} must look like: an enum's labels, or the column's type. */
  public static String expected(Column column) {
    if (!column.labels().isEmpty()) {
      return "one of " + String.join(", ", column.labels()) + " (the labels of " + column.type() + ", column " + column.name() + ")";
    }
    return "a value of type " + column.type() + " (column " + column.name() + ")";
  }

  /**
   * For a tool that runs inside a transaction it does not own (a change): {@code err} with what
   * {@link #blame} needs, to be blamed by {@link #resolve} once the transaction has ended.
   */
  public static Throwable pending(Throwable err, SqlParams params, String fallback) {
    return SqlStates.inClass(err, SqlStates.DATA_EXCEPTION)
        ? new Pending(err, params, fallback) : SqlErrors.argumentError(err, fallback);
  }

  /** {@code err}, or for one made by {@link #pending}, the fault it blames. */
  public static Future<Throwable> resolve(CallerDb db, ToolRequest request, long timeoutMs, Throwable err) {
    return err instanceof Pending p ? blame(db, request, timeoutMs, p.getCause(), p.params, p.fallback) : Future.succeededFuture(err);
  }

  private static final class Pending extends RuntimeException {
    private final transient SqlParams params;
    private final String fallback;

    Pending(Throwable cause, SqlParams params, String fallback) {
      super("a value PostgreSQL refused, not yet blamed", cause, false, false);
      this.params = params;
      this.fallback = fallback;
    }
  }
}
