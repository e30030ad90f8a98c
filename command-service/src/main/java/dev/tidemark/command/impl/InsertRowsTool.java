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
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code insert_rows}: one INSERT of every row; a column a row leaves out takes its DEFAULT. */
public final class InsertRowsTool implements ChangeTool {

  @Override
  public boolean runsCallerSql() {
    return false;  // its statement is built from the catalog, with every value bound
  }

  /** What PostgreSQL does to the table: insert, and with on_conflict: update, update. */
  private static final String[] INSERT = {"i"};
  private static final String[] UPSERT = {"i", "u"};

  private final CatalogCache catalog;
  private final FunctionGuard functions;

  public InsertRowsTool(CatalogCache catalog, FunctionGuard functions) {
    this.catalog = catalog;
    this.functions = functions;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return catalog.inTransaction(conn, args.getString("table"), table -> build(table, args)).compose(statement ->
        Sql.guard(functions, statement.table(), "update".equals(args.getString("on_conflict")) ? UPSERT : INSERT)
            .compose(v -> conn.preparedQuery(statement.sql()).execute(statement.params().tuple()))
            .recover(err -> Future.failedFuture(ValueFaults.pending(err, statement.params(), "rows")))
            .map(result -> (long) result.rowCount()));
  }

  /**
   * Without on_conflict, the rows inserted are the ones given: the approval writes them as they
   * were shown. With it, which rows are inserted and which updated depends on the table at the
   * time, so the change runs again.
   */
  @Override
  public Future<Applied> applyApproved(SqlConnection conn, JsonObject args, ShownInserts shown) {
    if (!"error".equals(args.getString("on_conflict", "error"))) {
      return applyReturning(conn, args);
    }
    return catalog.inTransaction(conn, args.getString("table"), table -> new ShownInserts.Target(table.schema(), table.name()))
        .compose(target -> shown.write(conn, functions, List.of(target), () -> applyReturning(conn, args)));
  }

  private static Sql.Statement build(Table table, JsonObject args) {
    JsonArray rows = args.getJsonArray("rows");
    Map<String, Column> columns = new LinkedHashMap<>();
    for (int i = 0; i < rows.size(); i++) {
      if (!(rows.getValue(i) instanceof JsonObject row)) {
        throw Sql.fault("rows", "/rows/" + i, "an object of column name to value");
      }
      for (String name : row.fieldNames()) {
        columns.putIfAbsent(name, table.column(name, "rows"));
      }
    }
    SqlParams params = new SqlParams();
    List<String> tuples = new ArrayList<>();
    for (int i = 0; i < rows.size(); i++) {
      JsonObject row = rows.getJsonObject(i);
      List<String> values = new ArrayList<>();
      for (Column c : columns.values()) {
        values.add(row.containsKey(c.name())
            ? Sql.value(row.getValue(c.name()), c, "rows", "/rows/" + i + "/" + c.name(), params)
            : "DEFAULT");
      }
      tuples.add("(" + String.join(", ", values) + ")");
    }
    List<String> names = columns.keySet().stream().map(Sql::ident).toList();
    StringBuilder sql = new StringBuilder("INSERT INTO ").append(table.sql())
        .append(" (").append(String.join(", ", names)).append(") VALUES ").append(String.join(", ", tuples));
    String onConflict = args.getString("on_conflict", "error");
    if (onConflict.equals("nothing")) {
      sql.append(" ON CONFLICT DO NOTHING");
    } else if (onConflict.equals("update")) {
      if (table.primaryKey().isEmpty()) {
        throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "Table " + table.qualified()
            + " has no primary key, so on_conflict: update has no key to match; use error or nothing.",
            new JsonObject().put("argument", "on_conflict"));
      }
      List<String> sets = columns.keySet().stream().filter(c -> !table.primaryKey().contains(c))
          .map(c -> Sql.ident(c) + " = EXCLUDED." + Sql.ident(c)).toList();
      sql.append(" ON CONFLICT (").append(String.join(", ", table.primaryKey().stream().map(Sql::ident).toList())).append(") ")
          .append(sets.isEmpty() ? "DO NOTHING" : "DO UPDATE SET " + String.join(", ", sets));
    }
    return new Sql.Statement(table, sql.toString(), params);
  }
}
