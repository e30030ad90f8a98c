package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.ValueFaults;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.TableCatalog.Table;
import dev.tidemark.database.TableCatalog.Column;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;

/** {@code update_rows}: sets columns of one row by key, or of the rows a filter matches. */
public final class UpdateRowsTool implements ChangeTool {

  @Override
  public boolean runsCallerSql() {
    return false;  // its statement is built from the catalog, with every value bound
  }

  private final CatalogCache catalog;
  private final FunctionGuard functions;

  public UpdateRowsTool(CatalogCache catalog, FunctionGuard functions) {
    this.catalog = catalog;
    this.functions = functions;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return catalog.inTransaction(conn, args.getString("table"), table -> build(table, args)).compose(statement -> {
      Table table = statement.table();
      SqlParams params = statement.params();
      return Sql.guard(functions, table, "u")
          .compose(v -> Sql.refuseEveryRowUnlessConfirmed(conn, args, table, "update"))
          .compose(v -> conn.preparedQuery(statement.sql()).execute(params.tuple()))
          .recover(err -> Future.failedFuture(ValueFaults.pending(err, params, "set")))
          .map(result -> {
            if (result.rowCount() == 0 && args.containsKey("key")) {
              throw new ToolException(ErrorCode.NOT_FOUND, "No row of " + table.qualified()
                  + " has that key; check it with get_row. Nothing was written.", new JsonObject().put("argument", "key"));
            }
            return (long) result.rowCount();
          });
    });
  }

  private static Sql.Statement build(Table table, JsonObject args) {
    SqlParams params = new SqlParams();
    List<String> sets = new ArrayList<>();
    JsonObject set = args.getJsonObject("set");
    for (String name : set.fieldNames()) {
      Column c = table.column(name, "set");
      sets.add(Sql.ident(c.name()) + " = " + Sql.value(set.getValue(name), c, "set", "/set/" + name, params));
    }
    String where = Sql.target(args, table, params);
    return new Sql.Statement(table, "UPDATE " + table.sql() + " SET " + String.join(", ", sets) + " WHERE " + where, params);
  }
}
