package dev.tidemark.query.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.StatementGuard;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.PgParams;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.PreparedStatement;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.Set;

/**
 * The second guard of {@code query} and {@code explain}, on top of the READ ONLY transaction:
 * PostgreSQL itself classifies the statement, never a pattern over its text.
 * <ol>
 *   <li>The statement is parsed alone through the extended protocol; its Parse message accepts
 *       exactly one statement, so several are refused.</li>
 *   <li>PostgreSQL plans it with {@code EXPLAIN (FORMAT JSON, VERBOSE)}. Utility statements (SET,
 *       DO, CALL, NOTIFY, LISTEN, COPY, LOCK, PREPARE, transaction control, DDL) cannot be
 *       explained, so a statement that parsed but cannot be explained is refused.</li>
 *   <li>The plan must be a plain read: a ModifyTable node (INSERT, UPDATE, DELETE, MERGE, also
 *       inside a CTE) or a LockRows node (FOR UPDATE/SHARE) is refused.</li>
 * </ol>
 * What passes still runs READ ONLY, so a write hidden in a function (nextval, a volatile
 * function) fails with SQLSTATE 25006, which maps to READ_ONLY as well.
 */
public final class ReadGuard {

  /**
   * A statement that passed the guard: the prepared statement, its bound values, its plan, the
   * tables it reads, its parameter types and what the function check reads of it.
   */
  public record Checked(PreparedStatement statement, Tuple params, JsonObject plan, Set<String> tables, String[] types,
                        FunctionGuard.Reach reach) {}

  private ReadGuard() {}

  /**
   * Checks one statement. The Parse and the lookup of its parameter types go out together (the
   * lookup runs after the Parse on the same connection); the EXPLAIN needs the values bound to
   * those types, so it follows.
   */
  public static Future<Checked> check(SqlConnection conn, FunctionGuard functions, String sql, JsonArray params, boolean mayWrite) {
    return check(conn, functions, sql, params, null, mayWrite);
  }

  /**
   * Like {@link #check(SqlConnection, FunctionGuard, String, JsonArray, boolean)}; with {@code knownTypes}, the parameter
   * types PostgreSQL gave this very text before, the lookup is skipped and the EXPLAIN goes out
   * with the Parse, in one round trip. Types that no longer hold make the check fail (a value
   * that does not convert, a parameter count or type PostgreSQL refuses); the caller then checks
   * again without them. The EXPLAIN never runs the statement, and the Parse refuses several
   * statements in one text, the EXPLAIN's included. {@code mayWrite}: whether the caller has change
   * tools, which a refusal of a write then points to.
   */
  public static Future<Checked> check(SqlConnection conn, FunctionGuard functions, String sql, JsonArray params, String[] knownTypes,
      boolean mayWrite) {
    return checkPlan(conn, sql, params, knownTypes, mayWrite)
        .compose(checked -> functions.check(checked.reach(), ErrorCode.READ_ONLY, "sql").map(checked));
  }

  private static Future<Checked> checkPlan(SqlConnection conn, String sql, JsonArray params, String[] knownTypes, boolean mayWrite) {
    Future<PreparedStatement> prepared = conn.prepare(sql)
        .recover(err -> Future.failedFuture(StatementGuard.severalStatements(err) ? refuse("Send exactly one statement; several are refused.") : err));
    if (knownTypes != null) {
      Tuple tuple;
      try {
        tuple = PgParams.bind(knownTypes, params);
      } catch (ToolException e) {
        return prepared.transform(x -> Future.failedFuture(e));
      }
      Future<?> savepoint = conn.query(SAVEPOINT).execute();
      Future<RowSet<Row>> plans = conn.preparedQuery(StatementGuard.EXPLAIN + sql).execute(tuple);
      // report the first failure in the order sent: a later one only follows from it
      return Future.join(prepared, savepoint, plans)
          .transform(ignored -> prepared.failed() ? Future.failedFuture(prepared.cause()) : plans)
          .transform(planned -> classify(conn, prepared.result(), tuple, knownTypes,
              planned.succeeded() ? Future.succeededFuture(planned.result()) : Future.failedFuture(planned.cause()), mayWrite));
    }
    // sent behind the Parse on the same connection, so PostgreSQL runs them after it
    Future<RowSet<Row>> types = conn.preparedQuery(StatementGuard.PARAM_TYPES_SQL).execute(Tuple.of(sql));
    return Future.join(prepared, types)
        .transform(ignored -> prepared.failed() ? Future.failedFuture(prepared.cause()) : types)
        .compose(rows -> {
          String[] found = rows.size() == 0 ? null : rows.iterator().next().getArrayOfStrings("types");
          String[] names = found == null ? new String[0] : found;
          Tuple tuple = PgParams.bind(names, params);
          Future<?> savepoint = conn.query(SAVEPOINT).execute();
          Future<RowSet<Row>> plans = conn.preparedQuery(StatementGuard.EXPLAIN + sql).execute(tuple);
          return classify(conn, prepared.result(), tuple, names,
              Future.join(savepoint, plans).transform(ignored -> plans), mayWrite);
        });
  }

  /**
   * Set before the EXPLAIN, so that a statement the role may not plan can be looked at once more
   * (see {@link #lockOrWrite}). A savepoint assigns no transaction id and ends with the rollback.
   */
  static final String SAVEPOINT = "SAVEPOINT tidemark_guard";

  /**
   * A statement whose EXPLAIN failed with 42501: a lock (FOR UPDATE, FOR SHARE) or a write needs
   * a privilege beyond SELECT, so a role without it is refused while planning, and the plan that
   * would show the lock is never made. Starting the statement answers the question the plan
   * would have: in a READ ONLY transaction PostgreSQL refuses a statement that locks or writes
   * (25006) before it checks privileges, and a plain read fails the same privilege check as the
   * EXPLAIN did, before its first node runs. So both callers see READ_ONLY for a lock or write,
   * and PERMISSION_DENIED only for a privilege a read itself lacks; nothing runs in either case.
   */
  private static Future<RowSet<Row>> lockOrWrite(SqlConnection conn, PreparedStatement prepared, Tuple tuple, Throwable denied,
      boolean mayWrite) {
    return conn.query("ROLLBACK TO SAVEPOINT tidemark_guard").execute()
        .compose(v -> prepared.cursor(tuple).read(1))
        .transform(started -> Future.failedFuture(started.failed() && SqlStates.is(started.cause(), SqlStates.READ_ONLY_SQL_TRANSACTION)
            ? refuse(LOCKS_OR_WRITES + writeAdvice(mayWrite))
            : denied));
  }

  /** Refuses what the plan shows is not a plain read of served tables. */
  private static Future<Checked> classify(SqlConnection conn, PreparedStatement prepared, Tuple tuple, String[] types,
      Future<RowSet<Row>> plans, boolean mayWrite) {
    return plans
        .recover(err -> prepared != null && SqlStates.is(err, SqlStates.INSUFFICIENT_PRIVILEGE)
            ? lockOrWrite(conn, prepared, tuple, err, mayWrite) : Future.failedFuture(err))
        .recover(err -> Future.failedFuture(StatementGuard.notPlannable(err)
            ? refuse("Only a plain read (SELECT, VALUES, TABLE or WITH ... SELECT) may run here; this is a utility statement"
                + " (such as SET, DO, CALL, NOTIFY, LISTEN, COPY, LOCK, PREPARE, DDL or transaction control).")
            : err))
        .map(planRows -> {
          JsonArray all = (JsonArray) planRows.iterator().next().getValue(0);
          JsonObject plan = all.getJsonObject(0);
          StatementGuard.Shape shape = StatementGuard.shape(plan.getJsonObject("Plan"));
          if (shape.writes()) {
            throw refuse("The statement writes (INSERT, UPDATE, DELETE or MERGE, perhaps inside a WITH). " + writeAdvice(mayWrite));
          }
          if (shape.locks()) {
            throw refuse(LOCKS_OR_WRITES + writeAdvice(mayWrite));
          }
          shape.refuseOwnTables("sql");
          return new Checked(prepared, tuple, plan, shape.relations(), types, FunctionGuard.Reach.of(all, types));
        });
  }

  private static final String LOCKS_OR_WRITES = "The statement locks rows (FOR UPDATE or FOR SHARE) or writes; reads here never lock or write. ";

  /** What a caller who sent a write can do: a change tool, where its token has them. */
  static String writeAdvice(boolean mayWrite) {
    return mayWrite ? "Use a change tool (insert_rows, update_rows, delete_rows or execute) to write."
        : "This token may only read: it has no tool that writes.";
  }

  static ToolException refuse(String message) {
    return new ToolException(ErrorCode.READ_ONLY, message + " Nothing was changed.", new JsonObject().put("argument", "sql"));
  }
}
