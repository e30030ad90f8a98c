package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.PgParams;
import dev.tidemark.database.StatementGuard;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.PreparedStatement;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Lets {@code execute} and {@code transaction} run exactly one INSERT, UPDATE, DELETE or MERGE
 * per statement, classified by PostgreSQL, never by a pattern over the text:
 * <ol>
 *   <li>The statement is parsed alone through the extended protocol, whose Parse message accepts
 *       exactly one statement.</li>
 *   <li>PostgreSQL plans it with {@code EXPLAIN (FORMAT JSON, VERBOSE)} (planned, not run). Utility
 *       statements (SET, RESET ROLE, DO, CALL, DDL, transaction control, ...) cannot be explained
 *       and are refused.</li>
 *   <li>The plan must contain a ModifyTable node (also inside a WITH): a plain read, or a SELECT of
 *       a function that writes behind the plan's back, is refused.</li>
 * </ol>
 * Only the error code of a refused utility statement looks at the text: PostgreSQL tells a
 * client what a statement is only by the command tag of executing it, and executing COMMIT or
 * ROLLBACK would end Tidemark's transaction. So when PostgreSQL has already refused a statement as
 * not plannable, its first keyword picks TRANSACTION_STATEMENT over INVALID_ARGUMENTS; the
 * refusal itself never depends on the text.
 */
public final class WriteGuard {

  /**
   * A statement that passed: the prepared statement, its bound values, whether its top plan node
   * writes (so its row count is rows changed), and the table it inserts into when it is a plain
   * insert ({@link #plainInsert}), null otherwise.
   */
  public record Checked(PreparedStatement statement, Tuple params, boolean topLevelWrite, ShownInserts.Target plainInsert) {}

  private static final Pattern COMMENTS = Pattern.compile("(?s)\\A(\\s+|--[^\\n]*(\\n|\\z)|/\\*.*?\\*/)*");
  private static final List<String> TRANSACTION_CONTROL = List.of(
      "begin", "start", "commit", "end", "rollback", "abort", "savepoint", "release", "prepare transaction");

  private WriteGuard() {}

  /** @param argument the argument the statement came in, for errors (sql, or statements/3/sql) */
  public static Future<Checked> check(SqlConnection conn, FunctionGuard functions, String sql, JsonArray params, String argument) {
    java.util.concurrent.atomic.AtomicReference<FunctionGuard.Reach> reach = new java.util.concurrent.atomic.AtomicReference<>();
    return conn.prepare(sql)
        .recover(err -> Future.failedFuture(StatementGuard.severalStatements(err)
            ? refuse(argument, "Send exactly one statement in " + argument + "; use the transaction tool for several.")
            : err))
        .compose(ps -> conn.preparedQuery(StatementGuard.PARAM_TYPES_SQL).execute(Tuple.of(sql)).compose(rows -> {
          String[] types = rows.size() == 0 ? new String[0] : rows.iterator().next().getArrayOfStrings("types");
          Tuple tuple = PgParams.bind(types == null ? new String[0] : types, params);
          return conn.preparedQuery(StatementGuard.EXPLAIN + sql).execute(tuple)
              .recover(err -> Future.failedFuture(StatementGuard.notPlannable(err)
                  ? notAChange(sql, argument)
                  : err))
              .map(plans -> {
                JsonArray all = (JsonArray) plans.iterator().next().getValue(0);
                JsonObject plan = all.getJsonObject(0).getJsonObject("Plan");
                // a rule may add plans after the first: each runs, so each is checked
                reach.set(FunctionGuard.Reach.of(all, types));
                StatementGuard.Shape shape = StatementGuard.shape(plan);
                if (!shape.writes()) {
                  throw refuse(argument, "The statement in " + argument + " changes no table: only INSERT, UPDATE, DELETE or MERGE (also"
                      + " inside a WITH) may run here. Use query to read.");
                }
                shape.refuseOwnTables(argument);
                return new Checked(ps, tuple, "ModifyTable".equals(plan.getString("Node Type")), plainInsert(all));
              })
              .compose(checked -> functions.check(reach.get(), ErrorCode.INVALID_ARGUMENTS, argument).map(checked));
        }));
  }

  /**
   * The table a plain insert writes, from its plans ({@code all}, one per statement a rule adds):
   * one INSERT whose rows are its own VALUES list (or one row of values), with no table read for
   * them (no scan, no subquery), no ON CONFLICT and no WITH, so that its rows are what its text
   * gives, and what PostgreSQL takes as it writes them (defaults, sequences, functions such as
   * now()). Null for any other statement.
   */
  static ShownInserts.Target plainInsert(JsonArray all) {
    if (all.size() != 1) {
      return null;
    }
    JsonObject plan = all.getJsonObject(0).getJsonObject("Plan");
    JsonArray children = plan.getJsonArray("Plans");
    if (!"ModifyTable".equals(plan.getString("Node Type")) || !"Insert".equals(plan.getString("Operation"))
        || plan.containsKey("Conflict Resolution") || children == null || children.size() != 1) {
      return null;
    }
    JsonObject source = children.getJsonObject(0);
    String type = source.getString("Node Type");
    return ("Result".equals(type) || "Values Scan".equals(type)) && !source.containsKey("Plans")
        ? new ShownInserts.Target(plan.getString("Schema"), plan.getString("Relation Name"))
        : null;
  }

  /** Called only for a statement PostgreSQL refused to plan: see the class comment. */
  static ToolException notAChange(String sql, String argument) {
    if (isTransactionControl(sql)) {
      return new ToolException(ErrorCode.TRANSACTION_STATEMENT, "The statement in " + argument + " is transaction control (BEGIN,"
          + " COMMIT, ROLLBACK, SAVEPOINT, ...). Tidemark runs every change in one transaction of its own: send only the"
          + " INSERT, UPDATE, DELETE or MERGE statements. Nothing was written.", new JsonObject().put("argument", argument));
    }
    return refuse(argument, "The statement in " + argument + " is a utility statement (such as SET, DO, CALL, COPY, LOCK or DDL)"
        + " or does not parse as a change; only INSERT, UPDATE, DELETE or MERGE may run here.");
  }

  static boolean isTransactionControl(String sql) {
    String rest = COMMENTS.matcher(sql).replaceFirst("").toLowerCase(Locale.ROOT).replaceAll("\\s+", " ");
    for (String keyword : TRANSACTION_CONTROL) {
      if (rest.equals(keyword) || rest.startsWith(keyword + " ") || rest.startsWith(keyword + ";")) {
        return true;
      }
    }
    return rest.startsWith("commit prepared") || rest.startsWith("rollback prepared");
  }

  static ToolException refuse(String argument, String message) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, message + " Nothing was written.", new JsonObject().put("argument", argument));
  }
}
