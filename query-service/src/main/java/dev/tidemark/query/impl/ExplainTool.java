package dev.tidemark.query.impl;

import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.SqlErrors;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** {@code explain}: PostgreSQL's plan; with analyze, only for statements the read guard accepts, inside it. */
public final class ExplainTool implements ReadTool {

  private final DatabaseConfig database;
  private final FunctionGuard functions;

  public ExplainTool(DatabaseConfig database, FunctionGuard functions) {
    this.database = database;
    this.functions = functions;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    String sql = args.getString("sql");
    JsonArray params = args.getJsonArray("params", new JsonArray());
    boolean analyze = args.getBoolean("analyze", false);
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(),
        conn -> ReadGuard.check(conn, functions, sql, params, request.caller().access() == Access.READ_WRITE).compose(checked -> {
          Future<JsonObject> plan = !analyze
              ? Future.succeededFuture(checked.plan())
              : conn.preparedQuery("EXPLAIN (ANALYZE, FORMAT JSON, VERBOSE) " + sql).execute(checked.params())
                  .map(rows -> ((JsonArray) rows.iterator().next().getValue(0)).getJsonObject(0));
          return plan.map(p -> {
            JsonObject out = new JsonObject()
                .put("plan", p)
                .put("analyzed", analyze)
                .put("tables", new JsonArray(List.copyOf(checked.tables())));
            JsonObject top = p.getJsonObject("Plan", new JsonObject());
            String summary = "explain: " + top.getString("Node Type", "plan") + ", estimated cost " + top.getValue("Total Cost")
                + (analyze ? ", ran in " + p.getValue("Execution Time") + " ms" : "")
                + (checked.tables().isEmpty() ? "" : ", reads " + String.join(", ", checked.tables()));
            return ToolReply.ok(summary, out);
          });
        })).recover(err -> Future.failedFuture(SqlErrors.toToolException(err, "sql")));
  }
}
