package dev.tidemark.command.impl;

import dev.tidemark.query.impl.ReadTool;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/** {@code execute}: one INSERT, UPDATE, DELETE or MERGE that {@link WriteGuard} accepts. */
public final class ExecuteTool implements ChangeTool {

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return run(conn, args.getString("sql"), args.getJsonArray("params", new JsonArray()), "sql", "params");
  }

  static Future<Long> run(SqlConnection conn, String sql, JsonArray params, String sqlArgument, String paramsArgument) {
    return WriteGuard.check(conn, sql, params, sqlArgument)
        .compose(checked -> checked.statement().query().execute(checked.params())
            .recover(err -> Future.failedFuture(ReadTool.argumentError(err, paramsArgument)))
            .map(rows -> checked.topLevelWrite() ? (long) rows.rowCount() : -1L));
  }
}
