package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.ValueFaults;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.TableCatalog.Table;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/** {@code delete_rows}: deletes one row by key, or the rows a filter matches, with every referential action that follows. */
public final class DeleteRowsTool implements ChangeTool {

  @Override
  public boolean runsCallerSql() {
    return false;  // its statement is built from the catalog, with every value bound
  }

  private final CatalogCache catalog;
  private final FunctionGuard functions;

  public DeleteRowsTool(CatalogCache catalog, FunctionGuard functions) {
    this.catalog = catalog;
    this.functions = functions;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return catalog.inTransaction(conn, args.getString("table"), table -> {
      SqlParams params = new SqlParams();
      return new Sql.Statement(table, "DELETE FROM " + table.sql() + " WHERE " + Sql.target(args, table, params), params);
    }).compose(statement -> {
      Table table = statement.table();
      SqlParams params = statement.params();
      return Sql.guard(functions, table, "d")
          .compose(v -> Sql.refuseEveryRowUnlessConfirmed(conn, args, table, "delete"))
          .compose(v -> conn.preparedQuery(statement.sql()).execute(params.tuple()))
          .recover(err -> Future.failedFuture(ValueFaults.pending(err, params, args.containsKey("key") ? "key" : "where")))
          .map(result -> {
            if (result.rowCount() == 0 && args.containsKey("key")) {
              throw new ToolException(ErrorCode.NOT_FOUND, "No row of " + table.qualified()
                  + " has that key; check it with get_row. Nothing was written.", new JsonObject().put("argument", "key"));
            }
            return (long) result.rowCount();
          });
    });
  }
}
