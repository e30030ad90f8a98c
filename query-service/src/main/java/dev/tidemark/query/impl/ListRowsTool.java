package dev.tidemark.query.impl;

import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.SqlText;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.query.StalenessCheck;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import dev.tidemark.database.FilterCompiler;
import dev.tidemark.database.PgJson;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.ValueFaults;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code list_rows}: a structured filter, an order, keyset pages. The page order is the requested
 * order plus the primary key, so it is total; the cursor holds the last row's values of those
 * columns (as text, cast back to each column's type) and the next page starts strictly after
 * them. A table or view without a primary key has no total order: it pages by position (OFFSET)
 * over the requested order, and says so with {@code paging: "offset"}.
 */
public final class ListRowsTool implements ReadTool {

  static final String KIND = "l";

  private final CatalogCache catalog;
  private final CursorCodec cursors;
  private final StalenessCheck staleness;

  public ListRowsTool(CatalogCache catalog, CursorCodec cursors, StalenessCheck staleness) {
    this.catalog = catalog;
    this.cursors = cursors;
    this.staleness = staleness;
  }

  /** One column of the page order. */
  record SortKey(Column column, boolean descending) {}

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    int limit = args.getInteger("limit", Limits.DEFAULT_ROWS);
    int maxBytes = Limits.resultBytes(args);
    JsonObject cursor;
    try {
      cursor = args.getString("cursor") == null ? null : cursors.decode(args.getString("cursor"), KIND, request.caller().id());
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    String shape = CursorCodec.fingerprint(new JsonArray().add(args.getString("table")).add(args.getValue("where"))
        .add(args.getValue("order")).add(args.getValue("columns")).encode());
    if (cursor != null && !shape.equals(cursor.getString("f"))) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_CURSOR,
          "The cursor belongs to another table, where, order or columns; send the same ones, or start again without a cursor.",
          new JsonObject().put("argument", "cursor")));
    }
    Future<String> position = cursor == null ? staleness.position() : ReadTool.checkFresh(staleness, cursor);
    String tableArg = args.getString("table");
    return position.compose(pos -> catalog.use(tableArg, table -> {
          List<Column> selected = selected(table, args.getJsonArray("columns"));
          List<SortKey> keys = sortKeys(table, args.getJsonArray("order"));
          boolean keyset = !table.primaryKey().isEmpty();
          SqlParams params = new SqlParams();
          String where = FilterCompiler.compile(args.getJsonObject("where"), table, params);
          String cap = params.add((long) maxBytes);
          StringBuilder sql = new StringBuilder(table.shapeTag()).append("SELECT ");
          List<String> items = new ArrayList<>();
          selected.forEach(c -> items.add(SizeGuard.guard(c, SqlText.quoteIdent(c.name())) + " AS " + SqlText.quoteIdent(c.name())));
          for (int i = 0; i < keys.size(); i++) {
            Column k = keys.get(i).column();
            items.add(SizeGuard.guard(k, SqlText.quoteIdent(k.name()) + "::text") + " AS " + SqlText.quoteIdent("_tidemark_k" + i));
          }
          items.add(SizeGuard.sizeItem());
          sql.append(String.join(", ", items)).append(" FROM ").append(table.sql()).append(SizeGuard.lateral(selected, cap))
              .append(" WHERE (").append(where).append(')');
          long offset = 0;
          if (cursor != null && keyset) {
            sql.append(" AND (").append(after(keys, cursor.getJsonArray("v", new JsonArray()), params)).append(')');
          } else if (cursor != null) {
            offset = cursor.getLong("o", 0L);
          }
          if (!keys.isEmpty()) {
            List<String> order = new ArrayList<>();
            for (SortKey k : keys) {
              // qualified: a bare name in ORDER BY would mean the output column, NULL in a row over the budget
              order.add(table.sql() + "." + SqlText.quoteIdent(k.column().name()) + (k.descending() ? " DESC NULLS FIRST" : " ASC NULLS LAST"));
            }
            sql.append(" ORDER BY ").append(String.join(", ", order));
          }
          sql.append(" LIMIT ").append(params.add((long) limit + 1));
          if (offset > 0) {
            sql.append(" OFFSET ").append(params.add(offset));
          }
          long pageOffset = offset;
          int sizeAt = selected.size() + keys.size();
          Page.Builder builder = new Page.Builder(limit, maxBytes, "max_bytes");
          JsonArray[] lastKeys = new JsonArray[1];  // of the last row taken: the next page starts after it
          return catalog.readPortal(db, request, table, tableArg, sql.toString(), params.tuple(),
                  portal -> Portals.fill(portal, builder, r -> {
                    Long size = r.getLong(sizeAt);
                    if (size != null && size > maxBytes ? !builder.offerOversized(size) : !builder.offer(PgJson.row(r, selected.size()))) {
                      return false;
                    }
                    JsonArray k = new JsonArray();
                    for (int i = 0; i < keys.size(); i++) {
                      k.add(r.getString(selected.size() + i));
                    }
                    lastKeys[0] = k;
                    return true;
                  }))
              .recover(err -> ValueFaults.blame(db, request, catalog.timeoutMs(), err, params, "where").compose(Future::failedFuture))
              .map(descriptors -> {
                Page page = builder.build();
                String next = null;
                if (page.more()) {
                  JsonObject c = new JsonObject().put("k", KIND).put("f", shape)
                      .put("t", new JsonArray().add(table.qualified())).put("pos", pos)
                      .put("iat", cursor == null ? System.currentTimeMillis() : cursor.getLong("iat"));
                  next = cursors.encode(keyset
                      ? c.put("v", lastKeys[0])
                      : c.put("o", pageOffset + page.rows().size()), request.caller().id());
                }
                JsonArray columns = new JsonArray();
                selected.forEach(col -> columns.add(col.name()));
                JsonObject out = page.into(new JsonObject().put("table", table.qualified()).put("columns", columns), next);
                out.put("paging", keyset ? "keyset" : "offset");
                return ToolReply.ok("list_rows: " + page.describe(" of " + table.qualified(), next), out, page.rows());
              });
        }));
  }

  private static List<Column> selected(Table table, JsonArray columns) {
    if (columns == null) {
      return List.copyOf(table.columns().values());
    }
    Map<String, Column> out = new LinkedHashMap<>();
    for (Object name : columns) {
      Column c = table.column(String.valueOf(name), "columns");
      out.put(c.name(), c);
    }
    return List.copyOf(out.values());
  }

  /** The requested order, then the primary key columns it does not already name. */
  static List<SortKey> sortKeys(Table table, JsonArray order) {
    Map<String, SortKey> keys = new LinkedHashMap<>();
    if (order != null) {
      for (Object o : order) {
        String spec = String.valueOf(o);
        boolean desc = spec.startsWith("-");
        String name = desc ? spec.substring(1) : spec;
        Column c = table.column(name, "order");
        keys.putIfAbsent(c.name(), new SortKey(c, desc));
      }
    }
    for (String pk : table.primaryKey()) {
      keys.putIfAbsent(pk, new SortKey(table.columns().get(pk), false));
    }
    return List.copyOf(keys.values());
  }

  /**
   * Rows strictly after {@code last} in the page order: for some i, equal on keys 0..i-1 and after
   * on key i. Ascending keys sort NULLs last, descending keys NULLs first.
   */
  static String after(List<SortKey> keys, JsonArray last, SqlParams params) {
    if (last.size() != keys.size()) {
      throw CursorCodec.invalid();
    }
    List<String> alternatives = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      List<String> parts = new ArrayList<>();
      for (int j = 0; j < i; j++) {
        parts.add(equal(keys.get(j), last.getString(j), params));
      }
      String a = strictlyAfter(keys.get(i), last.getString(i), params);
      if (a.equals("FALSE")) {
        continue;
      }
      parts.add(a);
      alternatives.add("(" + String.join(" AND ", parts) + ")");
    }
    return alternatives.isEmpty() ? "FALSE" : String.join(" OR ", alternatives);
  }

  private static String equal(SortKey k, String value, SqlParams params) {
    String col = SqlText.quoteIdent(k.column().name());
    return value == null ? col + " IS NULL" : col + " = " + params.add(value) + "::text::" + k.column().castType();
  }

  private static String strictlyAfter(SortKey k, String value, SqlParams params) {
    String col = SqlText.quoteIdent(k.column().name());
    if (k.descending()) {
      return value == null ? col + " IS NOT NULL" : col + " < " + params.add(value) + "::text::" + k.column().castType();
    }
    if (value == null) {
      return "FALSE";
    }
    String gt = col + " > " + params.add(value) + "::text::" + k.column().castType();
    return k.column().nullable() ? "(" + gt + " OR " + col + " IS NULL)" : gt;
  }
}
