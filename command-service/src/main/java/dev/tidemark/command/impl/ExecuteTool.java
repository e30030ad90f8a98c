package dev.tidemark.command.impl;

import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.SqlErrors;
import dev.tidemark.database.PgJson;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import java.nio.charset.StandardCharsets;

/** {@code execute}: one INSERT, UPDATE, DELETE or MERGE that {@link WriteGuard} accepts. */
public final class ExecuteTool implements ChangeTool {

  /** The most RETURNING rows a result shows; the rest are counted in the totals, not shown. */
  public static final int MAX_RETURNING_ROWS = 100;
  /** The most bytes of RETURNING row JSON a result shows, so that a plan or commit stays small enough for a model's context. */
  public static final int MAX_RETURNING_BYTES = 64 * 1024;

  private final FunctionGuard functions;

  public ExecuteTool(FunctionGuard functions) {
    this.functions = functions;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return applyReturning(conn, args).map(Applied::affected);
  }

  @Override
  public Future<Applied> applyReturning(SqlConnection conn, JsonObject args) {
    return execute(conn, args.getString("sql"), args.getJsonArray("params", new JsonArray()), "sql", "params").map(rows -> {
      long affected = rows.checked() ? rows.rows().rowCount() : -1L;
      if (rows.rows().columnDescriptors() == null || rows.rows().columnDescriptors().isEmpty()) {
        return new Applied(affected, null, false);
      }
      // mapped as the read tools map rows, so a value reads the same in a plan, a commit and a read
      JsonArray returning = new JsonArray();
      long bytes = 0;
      boolean truncated = false;
      for (Row r : rows.rows()) {
        JsonObject row = PgJson.row(r, r.size());
        int size = row.encode().getBytes(StandardCharsets.UTF_8).length + 1;
        if (returning.size() == MAX_RETURNING_ROWS || bytes + size > MAX_RETURNING_BYTES) {
          truncated = true;
          break;
        }
        bytes += size;
        returning.add(row);
      }
      return new Applied(affected, returning, truncated);
    });
  }

  /** A plain insert writes the rows the proposal showed; any other statement runs again. */
  @Override
  public Future<Applied> applyApproved(SqlConnection conn, JsonObject args, ShownInserts shown) {
    return plainInsert(conn, args.getString("sql"), args.getJsonArray("params", new JsonArray()), "sql", "params")
        .compose(target -> target == null ? applyReturning(conn, args)
            : shown.write(conn, functions, java.util.List.of(target), () -> applyReturning(conn, args)));
  }

  /** The table the statement inserts into when it is a plain insert ({@link WriteGuard#plainInsert}), null otherwise; it does not run. */
  Future<ShownInserts.Target> plainInsert(SqlConnection conn, String sql, JsonArray params, String sqlArgument, String paramsArgument) {
    return WriteGuard.check(conn, functions, sql, params, sqlArgument).map(WriteGuard.Checked::plainInsert)
        .recover(err -> Future.failedFuture(SqlErrors.argumentError(err, params.isEmpty() ? sqlArgument : paramsArgument)));
  }

  FunctionGuard functions() {
    return functions;
  }

  Future<Long> run(SqlConnection conn, String sql, JsonArray params, String sqlArgument, String paramsArgument) {
    return execute(conn, sql, params, sqlArgument, paramsArgument).map(rows -> rows.checked() ? (long) rows.rows().rowCount() : -1L);
  }

  /** The statement's rows, and whether its top plan node writes (so that its row count is rows changed). */
  private record Executed(RowSet<Row> rows, boolean checked) {}

  private Future<Executed> execute(SqlConnection conn, String sql, JsonArray params, String sqlArgument, String paramsArgument) {
    // without params a refused value can only come from the statement's own text; the planner
    // may refuse one already (it folds constants), so the guard's failures are blamed too
    String valueArgument = params.isEmpty() ? sqlArgument : paramsArgument;
    return WriteGuard.check(conn, functions, sql, params, sqlArgument)
        .compose(checked -> checked.statement().query().execute(checked.params())
            .map(rows -> new Executed(rows, checked.topLevelWrite())))
        .recover(err -> Future.failedFuture(SqlErrors.argumentError(err, valueArgument)));
  }
}
