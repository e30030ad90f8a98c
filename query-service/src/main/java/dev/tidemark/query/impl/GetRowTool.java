package dev.tidemark.query.impl;

import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.SqlText;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.PgJson;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.ValueFaults;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/** {@code get_row}: one row by its primary key; a composite key is an array in key order. */
public final class GetRowTool implements ReadTool {

  private final CatalogCache catalog;

  public GetRowTool(CatalogCache catalog) {
    this.catalog = catalog;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    String tableArg = request.arguments().getString("table");
    Object keyArg = request.arguments().getValue("key");
    JsonArray key = keyArg instanceof JsonArray a ? a : new JsonArray().add(keyArg);
    return catalog.use(tableArg, table -> {
      List<String> pk = table.primaryKey();
      if (pk.isEmpty()) {
        throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "Table " + table.qualified()
            + " has no primary key, so get_row cannot name one row; use list_rows with a where filter instead.",
            new JsonObject().put("argument", "table"));
      }
      if (key.size() != pk.size()) {
        throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "The primary key of " + table.qualified() + " is ("
            + String.join(", ", pk) + "): key needs " + pk.size() + (pk.size() == 1 ? " value" : " values, as an array in that order")
            + ", got " + key.size() + ".", new JsonObject().put("argument", "key").put("primary_key", new JsonArray(pk)));
      }
      SqlParams params = new SqlParams();
      String cap = params.add((long) Limits.MAX_RESULT_BYTES);
      List<Column> all = List.copyOf(table.columns().values());
      List<String> items = new ArrayList<>();
      all.forEach(c -> items.add(SizeGuard.guard(c, SqlText.quoteIdent(c.name())) + " AS " + SqlText.quoteIdent(c.name())));
      items.add(SizeGuard.sizeItem());
      List<String> conditions = new ArrayList<>();
      for (int i = 0; i < pk.size(); i++) {
        Column c = table.columns().get(pk.get(i));
        Object v = key.getValue(i);
        if (v == null || v instanceof JsonObject || v instanceof JsonArray) {
          throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "key value " + i + " must be a string, number or boolean.",
              new JsonObject().put("argument", "key"));
        }
        conditions.add(SqlText.quoteIdent(c.name()) + " = " + params.addScalar(v, c, "key", "/key" + (key.size() == 1 && !(request.arguments().getValue("key") instanceof JsonArray) ? "" : "/" + i)));
      }
      // a gate PostgreSQL evaluates once, before the scan: the relation of this name is still the one
      // looked up, so a table dropped and created again (perhaps as a view) is never read on a stale shape
      conditions.add(params.add(table.oid()) + "::int8::oid = " + SqlText.quoteLiteralText(table.sql()) + "::regclass");
      String sql = table.shapeTag() + "SELECT " + String.join(", ", items) + " FROM " + table.sql() + SizeGuard.lateral(all, cap) + " WHERE " + String.join(" AND ", conditions) + " LIMIT 1";
      return catalog.read(db, request, table, tableArg, sql, params.tuple())
          .recover(err -> ValueFaults.blame(db, request, catalog.timeoutMs(), err, params, "key").compose(Future::failedFuture))
          .map(rows -> {
            if (rows.size() == 0) {
              throw new ToolException(ErrorCode.NOT_FOUND, "No row of " + table.qualified() + " has that key (or your role may not see it); find rows with list_rows.",
                  new JsonObject().put("argument", "key"));
            }
            io.vertx.sqlclient.Row r = rows.iterator().next();
            Long size = r.getLong(all.size());
            Page.Builder one = new Page.Builder(1, Limits.MAX_RESULT_BYTES, null);
            JsonObject row = PgJson.row(r, all.size());
            if (size != null && size > Limits.MAX_RESULT_BYTES) {
              one.offerOversized(size);
            }
            one.offer(row);
            JsonObject out = new JsonObject().put("table", table.qualified()).put("primary_key", new JsonArray(pk)).put("row", row);
            return ToolReply.ok("get_row: 1 row of " + table.qualified(), out, new JsonArray().add(row));
          });
    });
  }
}
