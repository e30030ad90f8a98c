package dev.tidemark.command.impl;

import dev.tidemark.contract.Caller;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.database.FunctionGuard;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/**
 * A named change tool: its statement, with the caller's arguments and identity bound as values,
 * run as {@code execute} runs one (the write guard and the function check, RETURNING rows shown),
 * so that it plans, commits, asks consent and becomes a proposal as execute does. Its plan
 * depends on the definition too: a plan made before a reload that changed the tool is
 * PLAN_CHANGED at commit, never committed under the new statement.
 */
final class NamedChangeTool implements ChangeTool {

  private final ExecuteTool execute;
  private final NamedTool tool;
  private final Caller caller;

  NamedChangeTool(FunctionGuard functions, NamedTool tool, Caller caller) {
    this.execute = new ExecuteTool(functions);
    this.tool = tool;
    this.caller = caller;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject arguments) {
    return applyReturning(conn, arguments).map(Applied::affected);
  }

  @Override
  public Future<Applied> applyReturning(SqlConnection conn, JsonObject arguments) {
    return reported(execute.applyReturning(conn, statement(arguments)));
  }

  /** As execute's approval: a plain insert writes the rows the proposal showed, any other statement runs again. */
  @Override
  public Future<Applied> applyApproved(SqlConnection conn, JsonObject arguments, ShownInserts shown) {
    return reported(execute.applyApproved(conn, statement(arguments), shown));
  }

  /** The tool's statement as execute's arguments, with the caller's arguments and identity bound. */
  private JsonObject statement(JsonObject arguments) {
    return new JsonObject().put("sql", tool.statement()).put("params", tool.bind(arguments, caller));
  }

  /** What execute did, with the definition's fingerprint, and its faults named as the tool's own. */
  private Future<Applied> reported(Future<Applied> applied) {
    return applied.map(a -> new Applied(a.affected(), a.returning(), a.truncated(),
            new Report(new JsonObject(), false, tool.fingerprint(), null)))
        .recover(err -> Future.failedFuture(tool.blame(err)));
  }
}
