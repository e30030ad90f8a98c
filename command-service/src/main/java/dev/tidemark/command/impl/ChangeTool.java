package dev.tidemark.command.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/**
 * One change tool: runs its statements on a connection that is already in a transaction, as the
 * caller's role. It never commits or rolls back: {@link ChangeRunner} decides, from what the
 * database captured, whether the transaction is a plan (rolled back) or a commit.
 */
public interface ChangeTool {

  /**
   * Runs the change. The result is the number of rows the tool's own statement reported, or -1
   * when the statement does not report rows it changed (a WITH whose outer part is a SELECT).
   */
  Future<Long> apply(SqlConnection conn, JsonObject arguments);

  /** Runs the change and also hands back the rows its statement returned (RETURNING), for the tools that show them. */
  default Future<Applied> applyReturning(SqlConnection conn, JsonObject arguments) {
    return apply(conn, arguments).map(n -> new Applied(n, null, false));
  }

  /**
   * As {@link #applyReturning(SqlConnection, JsonObject)}, knowing whether this run is the commit
   * (a tool that refuses at commit what its plan only reports says so here).
   */
  default Future<Applied> applyReturning(SqlConnection conn, JsonObject arguments, boolean commit) {
    return applyReturning(conn, arguments);
  }

  /**
   * Runs the change as the approval of its proposal writes it. A tool whose change is only plain
   * inserts (rows its own statements give, no conflict handling) writes the rows the proposal
   * showed ({@code shown}), with the values shown; every other change runs again, as here.
   */
  default Future<Applied> applyApproved(SqlConnection conn, JsonObject arguments, ShownInserts shown) {
    return applyReturning(conn, arguments, true);
  }

  /**
   * Whether the tool runs SQL a caller wrote (execute, transaction): it runs on connections reset
   * whole after each call. A tool that runs only statements Tidemark wrote says false, and runs on
   * connections that keep them prepared (CallerPools.Prepared#WRITES); a tool that does not say is
   * taken to run a caller's SQL.
   */
  default boolean runsCallerSql() {
    return true;
  }

  /**
   * What a change did as its statement reported it: the row count (as {@link #apply}), and the rows
   * of a RETURNING clause, null when the tool shows none; {@code truncated} when they were cut to the cap;
   * and what the tool says beyond the rows it changed ({@code report}, null when nothing).
   */
  record Applied(long affected, JsonArray returning, boolean truncated, Report report) {

    public Applied(long affected, JsonArray returning, boolean truncated) {
      this(affected, returning, truncated, null);
    }
  }

  /**
   * What a tool reports beyond the rows its change captured: fields of its own for the result;
   * whether it removes something the captured rows do not show (so committing needs consent); a
   * fingerprint of the state it depends on beyond those rows (a plan whose fingerprint differs at
   * commit is PLAN_CHANGED), null when none; and a description of what it does, null to describe
   * the captured rows.
   */
  record Report(JsonObject fields, boolean removes, String fingerprint, String describe) {

    public static Report of(JsonObject fields) {
      return new Report(fields, false, null, null);
    }
  }
}
