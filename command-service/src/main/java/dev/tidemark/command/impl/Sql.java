package dev.tidemark.command.impl;

import dev.tidemark.database.SqlText;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.FilterCompiler;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.ValueFaults;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;

/** SQL building shared by the structured change tools: values, keys and filters, always as parameters. */
final class Sql {

  private Sql() {}

  /** A row tool's statement, built from the table's shape before anything runs in the change's transaction. */
  record Statement(Table table, String sql, SqlParams params) {}

  /**
   * Refuses, before the statement runs, a write of {@code table} with {@code ops} (i, u, d) that
   * would make PostgreSQL run a function the function check refuses (a trigger's, a constraint's,
   * a default's...): PERMISSION_DENIED, naming each route.
   */
  static Future<Void> guard(FunctionGuard functions, Table table, String... ops) {
    return functions.check(FunctionGuard.Reach.writing(table.schema(), table.name(), ops), ErrorCode.PERMISSION_DENIED, "table");
  }

  static String ident(String name) {
    return SqlText.quoteIdent(name);
  }

  /** A value for {@code column}: NULL, or its text form bound as a parameter and cast to the column's type. */
  static String value(Object value, Column column, String argument, String pointer, SqlParams params) {
    if (value == null) {
      return "NULL";
    }
    return params.addFor(value, column, argument, pointer);
  }

  /**
   * The condition that picks the rows of {@code update_rows} and {@code delete_rows}: the primary
   * key ({@code key}) or a structured filter ({@code where}), exactly one of them.
   */
  static String target(JsonObject args, Table table, SqlParams params) {
    boolean hasKey = args.containsKey("key");
    boolean hasWhere = args.containsKey("where");
    if (hasKey == hasWhere) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "Give exactly one of key (one row by its primary key) and where (a filter); " + (hasKey ? "both were given." : "neither was given."),
          new JsonObject().put("argument", hasKey ? "where" : "key"));
    }
    if (hasWhere) {
      return FilterCompiler.compile(args.getJsonObject("where"), table, params);
    }
    List<String> pk = table.primaryKey();
    if (pk.isEmpty()) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "Table " + table.qualified()
          + " has no primary key, so key cannot name one row; use where instead.", new JsonObject().put("argument", "key"));
    }
    Object keyArg = args.getValue("key");
    JsonArray key = keyArg instanceof JsonArray a ? a : new JsonArray().add(keyArg);
    if (key.size() != pk.size()) {
      throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "The primary key of " + table.qualified() + " is ("
          + String.join(", ", pk) + "): key needs " + pk.size() + (pk.size() == 1 ? " value" : " values, as an array in that order")
          + ", got " + key.size() + ".", new JsonObject().put("argument", "key").put("primary_key", new JsonArray(pk)));
    }
    List<String> conditions = new ArrayList<>();
    for (int i = 0; i < pk.size(); i++) {
      Column c = table.columns().get(pk.get(i));
      Object v = key.getValue(i);
      if (v == null || v instanceof JsonObject || v instanceof JsonArray) {
        throw fault("key", keyArg instanceof JsonArray ? "/key/" + i : "/key", "a string, number or boolean");
      }
      conditions.add(ident(c.name()) + " = " + params.addScalar(v, c, "key", keyArg instanceof JsonArray ? "/key/" + i : "/key"));
    }
    return String.join(" AND ", conditions);
  }

  /**
   * DECISION_REQUIRED when {@code where} matches every row of a table that has rows, unless the
   * caller sent {@code confirm: true}: an agent that meant a few rows should not touch them all.
   */
  static Future<Void> refuseEveryRowUnlessConfirmed(SqlConnection conn, JsonObject args, Table table, String verb) {
    if (!args.containsKey("where") || Boolean.TRUE.equals(args.getBoolean("confirm"))) {
      return Future.succeededFuture();
    }
    SqlParams params = new SqlParams();
    String where = FilterCompiler.compile(args.getJsonObject("where"), table, params);
    String sql = "SELECT EXISTS (SELECT 1 FROM " + table.sql() + ") AND NOT EXISTS (SELECT 1 FROM " + table.sql()
        + " WHERE (" + where + ") IS NOT TRUE)";
    return conn.preparedQuery(sql).execute(params.tuple())
        .recover(err -> Future.failedFuture(ValueFaults.pending(err, params, "where")))
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? Future.failedFuture(new ToolException(ErrorCode.DECISION_REQUIRED,
                "The where matches every row of " + table.qualified() + ", so this would " + verb + " them all. If that is what the user"
                    + " wants, ask them and send confirm: true; otherwise narrow the where. Nothing was written.",
                new JsonObject().put("argument", "where").put("reason", "every_row")
                    .put("question", "Allow " + verb + " every row of " + table.qualified() + "?")))
            : Future.succeededFuture());
  }

  static ToolException fault(String argument, String pointer, String expected) {
    return SqlParams.fault(argument, pointer, expected);
  }
}
