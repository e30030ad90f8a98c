package dev.tidemark.command.impl;

import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.TableCatalog;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import dev.tidemark.database.ValueFaults;
import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code restore_rows}: one row written back as it was just before a change, from what the
 * changelog recorded of it.
 */
public final class RestoreRowsTool extends RestoreTool {

  private final DatabaseConfig database;
  private final History history;
  private final Restorer restorer;
  private final Supplier<KeyRing> keys;

  /**
   * @param pool Tidemark's login on the served database
   * @param changelog its login on the database the changelog is stored in, which it reads
   * @param keys the database's key ring, which signed the positions changes_since gave out
   */
  public RestoreRowsTool(DatabaseConfig database, Pool pool, Pool changelog, Supplier<KeyRing> keys, FunctionGuard functions) {
    this.database = database;
    this.history = new History(pool, changelog);
    this.restorer = new Restorer(database.schemas(), functions);
    this.keys = keys;
  }

  @Override
  public Future<Applied> applyReturning(SqlConnection conn, JsonObject args, boolean commit) {
    ChangePosition before = ChangeCursor.decode(args.getString("before"), keys.get()).orElse(null);
    if (before == null) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_CURSOR, "before is not a position this database's changelog"
          + " gave out; pass the position of a change exactly as changes_since shows it. Nothing was written.",
          new JsonObject().put("argument", "before")));
    }
    boolean overwrite = Boolean.TRUE.equals(args.getBoolean("overwrite"));
    return TableCatalog.resolve(conn, database.schemas(), args.getString("table"))
        .compose(table -> !"table".equals(table.kind()) && !"partitioned_table".equals(table.kind())
            ? Future.failedFuture(History.notCaptured(table.qualified()))  // a view's or a foreign table's rows are never captured
            // the caller's right to the whole table first: only then is anything said of the row's history
            : restorer.check(conn, java.util.Set.of(table.oid()))
                .compose(x -> key(conn, table, args.getValue("key")))
                .compose(key -> history.row(table.oid(), table.qualified(), key, before)))
        .compose(row -> restorer.restore(conn, List.of(row), overwrite, commit));
  }

  /**
   * The key given (a value, an array in key order, or an object of the key columns) as the
   * changelog writes keys: each value read as its column's type, in this session, then as JSON.
   */
  private static Future<JsonArray> key(SqlConnection conn, Table table, Object given) {
    List<String> pk = table.primaryKey();
    if (pk.isEmpty()) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "Table " + table.qualified()
          + " has no primary key, so a row of it cannot be found again to restore it. Nothing was written.",
          new JsonObject().put("argument", "table")));
    }
    JsonArray values;
    if (given instanceof JsonObject o) {
      values = new JsonArray();
      for (String k : pk) {
        if (!o.containsKey(k)) {
          return Future.failedFuture(wrongKey(table, "the object has no " + k));
        }
        values.add(o.getValue(k));
      }
      if (o.size() != pk.size()) {
        return Future.failedFuture(wrongKey(table, "the object names columns that are not the key"));
      }
    } else {
      values = given instanceof JsonArray a ? a : new JsonArray().add(given);
    }
    if (values.size() != pk.size()) {
      return Future.failedFuture(wrongKey(table, "got " + values.size() + (values.size() == 1 ? " value" : " values")));
    }
    SqlParams params = new SqlParams();
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < pk.size(); i++) {
      Object v = values.getValue(i);
      String pointer = given instanceof JsonObject ? "/key/" + pk.get(i) : given instanceof JsonArray ? "/key/" + i : "/key";
      if (v == null || v instanceof JsonObject || v instanceof JsonArray) {
        return Future.failedFuture(SqlParams.fault("key", pointer, "a string, number or boolean"));
      }
      Column c = table.columns().get(pk.get(i));
      parts.add("to_jsonb(" + params.addScalar(v, c, "key", pointer) + ")");
    }
    return conn.preparedQuery("SELECT jsonb_build_array(" + String.join(", ", parts) + ")").execute(params.tuple())
        .recover(err -> Future.failedFuture(ValueFaults.pending(err, params, "key")))
        .map(rows -> (JsonArray) rows.iterator().next().getValue(0));
  }

  private static ToolException wrongKey(Table table, String what) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "The primary key of " + table.qualified() + " is (" + String.join(", ",
        table.primaryKey()) + "): key needs its values, as a value, an array in that order or an object of those columns; " + what
        + ". Nothing was written.", new JsonObject().put("argument", "key").put("primary_key", new JsonArray(table.primaryKey())));
  }
}
