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
    JsonObject statement = new JsonObject().put("sql", tool.statement()).put("params", tool.bind(arguments, caller));
    return execute.applyReturning(conn, statement)
        .map(applied -> new Applied(applied.affected(), applied.returning(), applied.truncated(),
            new Report(new JsonObject(), false, tool.fingerprint(), null)))
        .recover(err -> Future.failedFuture(tool.blame(err)));
  }
}
