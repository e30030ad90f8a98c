package dev.tidemark.command.impl;

import dev.tidemark.command.impl.History.Change;
import dev.tidemark.command.impl.History.RowRestore;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.SqlText;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Puts rows back as the changelog recorded them, as the caller's role, on the caller's connection
 * in the change's transaction: it checks that the caller may read each table whole (the images
 * come from the changelog, which knows nothing of column grants or policies), compares each row as
 * it is now with what the changelog last recorded of it, and writes every row back in one
 * statement, so that foreign keys are checked once all of them are back (a customer and the
 * orders its deletion cascaded to come back together, in whichever order).
 */
final class Restorer {

  /** A served table as the caller's role sees it, by oid. */
  private record Target(long relid, String schema, String name, String sql, String qualified, boolean rowSecurity, boolean readable,
      List<String> key, List<String> insertable, List<String> updatable) {}

  private static final String TABLES_SQL = """
      SELECT c.oid::int8 AS relid, n.nspname::text AS schema, c.relname::text AS name, format('%I.%I', n.nspname, c.relname) AS sql,
             n.nspname || '.' || c.relname AS qualified,
             c.relrowsecurity AS row_security, has_table_privilege(c.oid, 'SELECT') AS readable,
             coalesce((SELECT array_agg(a.attname::text ORDER BY k.ord)
                         FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                        WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS key,
             coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''), '{}') AS insertable,
             coalesce((SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
                        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
                          AND a.attidentity <> 'a'), '{}') AS updatable
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.oid = ANY($1::int8[]::oid[]) AND c.relkind IN ('r', 'p') AND n.nspname = ANY($2::text[]) AND n.nspname <> 'tidemark'""";

  private final List<String> schemas;
  private final FunctionGuard functions;

  Restorer(List<String> schemas, FunctionGuard functions) {
    this.schemas = schemas;
    this.functions = functions;
  }

  /**
   * Writes {@code rows} back. The result's report names the rows changed again since the change
   * undone ({@code changed_since}); a commit with such rows is PLAN_CHANGED unless
   * {@code overwrite}, since restoring them discards those later changes.
   */
  Future<ChangeTool.Applied> restore(SqlConnection conn, List<RowRestore> rows, boolean overwrite, boolean commit) {
    Set<Long> relids = new TreeSet<>();
    rows.forEach(r -> relids.add(r.relid()));
    return tables(conn, relids).compose(targets -> {
      Future<List<Live>> live = Future.succeededFuture(new ArrayList<>());
      Map<Long, List<RowRestore>> byTable = new LinkedHashMap<>();
      rows.forEach(r -> byTable.computeIfAbsent(r.relid(), x -> new ArrayList<>()).add(r));
      for (Map.Entry<Long, List<RowRestore>> e : byTable.entrySet()) {
        Target t = targets.get(e.getKey());
        live = live.compose(found -> live(conn, t, e.getValue()).map(more -> {
          found.addAll(more);
          return found;
        }));
      }
      return live.compose(states -> write(conn, targets, states, overwrite, commit));
    });
  }

  /**
   * Succeeds when the caller may have rows of every table of {@code relids} restored: SELECT on the
   * whole table, no row-level security, a primary key, and the table still served.
   */
  Future<Void> check(SqlConnection conn, Set<Long> relids) {
    return relids.isEmpty() ? Future.succeededFuture() : tables(conn, relids).mapEmpty();
  }

  /** A row as it is now, beside what is to be written back. */
  private record Live(RowRestore row, JsonObject at, boolean present, boolean asExpected, boolean asDesired) {

    boolean changedSince() {
      return !row.later().isEmpty() || (row.expected() == null ? present : !asExpected);
    }
  }

  private Future<Map<Long, Target>> tables(SqlConnection conn, Set<Long> relids) {
    return conn.preparedQuery(TABLES_SQL).execute(Tuple.tuple().addValue(relids.toArray(new Long[0])).addValue(schemas.toArray(new String[0]))).map(rs -> {
      Map<Long, Target> out = new LinkedHashMap<>();
      for (Row r : rs) {
        Target t = new Target(r.getLong("relid"), r.getString("schema"), r.getString("name"), r.getString("sql"), r.getString("qualified"),
            r.getBoolean("row_security"), r.getBoolean("readable"), List.of(r.getArrayOfStrings("key")),
            List.of(r.getArrayOfStrings("insertable")), List.of(r.getArrayOfStrings("updatable")));
        if (!t.readable()) {
          throw new ToolException(ErrorCode.PERMISSION_DENIED, "Restoring rows of " + t.qualified() + " needs SELECT on the whole table:"
              + " the rows come back from the changelog with every column. Nothing was written.", new JsonObject().put("table", t.qualified()));
        }
        if (t.rowSecurity()) {
          throw new ToolException(ErrorCode.PERMISSION_DENIED, "Table " + t.qualified() + " has row-level security, and the changelog's"
              + " rows are not filtered by its policies, so Tidemark does not restore its rows; change them with update_rows or"
              + " insert_rows. Nothing was written.", new JsonObject().put("table", t.qualified()).put("reason", "row_level_security"));
        }
        if (t.key().isEmpty()) {
          throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "Table " + t.qualified() + " has no primary key, so a row of it cannot"
              + " be found again to restore it. Nothing was written.", new JsonObject().put("table", t.qualified()));
        }
        out.put(t.relid(), t);
      }
      for (long relid : relids) {
        if (!out.containsKey(relid)) {
          throw new ToolException(ErrorCode.INVALID_ARGUMENTS, "A table whose rows this would restore was dropped, renamed out of the"
              + " served schemas or is not a table any more, so its rows cannot come back. Nothing was written.",
              new JsonObject().put("reason", "table_gone"));
        }
      }
      return out;
    });
  }

  /** Each row as it is now: whether it exists, and whether it is as the changelog last recorded it and as it is to become. */
  private Future<List<Live>> live(SqlConnection conn, Target t, List<RowRestore> rows) {
    JsonArray wanted = new JsonArray();
    List<JsonObject> ats = new ArrayList<>();
    for (RowRestore r : rows) {
      JsonObject at = at(t, r);
      ats.add(at);
      wanted.add(new JsonObject().put("at", at).put("expected", r.expected()).put("desired", r.desired()));
    }
    String sql = "SELECT e.n::int AS n, t.ctid IS NOT NULL AS present, " + same(t, "expected") + " AS as_expected, "
        + same(t, "desired") + " AS as_desired FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY e(v, n) LEFT JOIN " + t.sql()
        + " t ON " + keyMatch(t, "t", "e.v->'at'") + " ORDER BY e.n";
    return conn.preparedQuery(sql).execute(Tuple.of(wanted)).map(rs -> {
      List<Live> out = new ArrayList<>();
      for (Row r : rs) {
        int i = r.getInteger("n") - 1;
        out.add(new Live(rows.get(i), ats.get(i), r.getBoolean("present"), r.getBoolean("as_expected"), r.getBoolean("as_desired")));
      }
      return out;
    });
  }

  /**
   * Whether the row {@code t} has every value of the image {@code e.v->field}, both as the session
   * writes them (the image read back into the table's row type): columns added since are not compared.
   */
  private static String same(Target t, String field) {
    String image = "e.v->'" + field + "'";
    return "(t.ctid IS NOT NULL AND jsonb_typeof(" + image + ") = 'object' AND NOT EXISTS (SELECT 1 FROM jsonb_each(" + image
        + ") x WHERE to_jsonb(t) -> x.key IS DISTINCT FROM to_jsonb(jsonb_populate_record(NULL::" + t.sql() + ", " + image
        + ")) -> x.key))";
  }

  /** {@code (alias.k1, ...) = (the key columns of the jsonb object image, read into the table's row type)}. */
  private static String keyMatch(Target t, String alias, String image) {
    StringBuilder live = new StringBuilder();
    StringBuilder given = new StringBuilder();
    for (String k : t.key()) {
      String col = SqlText.quoteIdent(k);
      live.append(live.isEmpty() ? "" : ", ").append(alias).append('.').append(col);
      given.append(given.isEmpty() ? "" : ", ").append("k.").append(col);
    }
    return "(" + live + ") = (SELECT " + given + " FROM jsonb_populate_record(NULL::" + t.sql() + ", " + image + ") k)";
  }

  /** Where the row is now: the key of what the changelog last recorded, else of what comes back, else the key given. */
  private static JsonObject at(Target t, RowRestore r) {
    JsonObject image = r.expected() != null ? r.expected() : r.desired();
    JsonObject at = new JsonObject();
    for (int i = 0; i < t.key().size(); i++) {
      String k = t.key().get(i);
      at.put(k, image != null ? image.getValue(k) : r.key() != null && i < r.key().size() ? r.key().getValue(i) : null);
    }
    return at;
  }

  private Future<ChangeTool.Applied> write(SqlConnection conn, Map<Long, Target> targets, List<Live> states, boolean overwrite,
      boolean commit) {
    JsonArray changedSince = new JsonArray();
    // one group per table, operation and set of columns the images hold: each group is one part of the statement
    Map<String, JsonArray> groups = new LinkedHashMap<>();
    Map<String, Target> groupTable = new LinkedHashMap<>();
    Map<String, List<String>> groupColumns = new LinkedHashMap<>();
    for (Live l : states) {
      Target t = targets.get(l.row().relid());
      if (l.changedSince()) {
        JsonArray later = new JsonArray();
        for (Change c : l.row().later()) {
          later.add(c.toJson());
        }
        JsonObject entry = new JsonObject().put("table", t.qualified()).put("key", keyValues(t, l.at())).put("changes", later);
        if (l.row().expected() == null ? l.present() : !l.asExpected()) {
          entry.put("unrecorded", l.row().later().isEmpty());
        }
        changedSince.add(entry);
      }
      JsonObject desired = l.row().desired();
      String op;
      JsonObject value;
      List<String> columns;
      if (desired == null) {
        if (!l.present()) {
          continue;
        }
        op = "DELETE";
        value = l.at();
        columns = List.of();
      } else if (l.present()) {
        if (l.asDesired()) {
          continue;
        }
        op = "UPDATE";
        value = new JsonObject().put("at", l.at()).put("to", desired);
        columns = t.updatable().stream().filter(desired::containsKey).toList();
        if (columns.isEmpty()) {
          continue;  // only generated and identity columns: nothing of the row can be written back
        }
      } else {
        op = "INSERT";
        value = desired;
        columns = t.insertable().stream().filter(desired::containsKey).toList();
      }
      String group = t.relid() + "|" + op + "|" + columns;
      groups.computeIfAbsent(group, g -> new JsonArray()).add(value);
      groupTable.put(group, t);
      groupColumns.put(group, columns);
    }
    if (commit && !overwrite && !changedSince.isEmpty()) {
      return Future.failedFuture(new ToolException(ErrorCode.PLAN_CHANGED, changedSince.size() + (changedSince.size() == 1 ? " row" : " rows")
          + " changed again after the change being undone (see changed_since), so restoring would discard those later changes."
          + " Show them to the user; to restore over them, plan again with overwrite: true and commit that plan. Nothing was written.",
          new JsonObject().put("argument", "overwrite").put("changed_since", changedSince)));
    }
    JsonObject report = new JsonObject().put("changed_since", changedSince);
    if (!commit) {
      report.put("note", changedSince.isEmpty()
          ? "Rows come back with the values the changelog recorded, identity and serial values included."
          : changedSince.size() + (changedSince.size() == 1 ? " row" : " rows") + " changed again since (changed_since): this plan"
              + " restores over them, and commits only when planned with overwrite: true.");
    }
    if (groups.isEmpty()) {
      return Future.succeededFuture(new ChangeTool.Applied(0, null, false, ChangeTool.Report.of(report)));
    }
    List<String> parts = new ArrayList<>();
    List<String> counts = new ArrayList<>();
    Tuple params = Tuple.tuple();
    int n = 0;
    Set<FunctionGuard.TableOp> writes = new java.util.LinkedHashSet<>();
    for (Map.Entry<String, JsonArray> g : groups.entrySet()) {
      Target t = groupTable.get(g.getKey());
      List<String> columns = groupColumns.get(g.getKey());
      String op = g.getKey().split("\\|")[1];
      writes.add(new FunctionGuard.TableOp(t.schema(), t.name(), op.substring(0, 1).toLowerCase(java.util.Locale.ROOT)));
      params.addValue(g.getValue());
      String p = "$" + (++n) + "::jsonb";
      String name = "w" + n;
      parts.add(name + " AS (" + switch (op) {
        case "DELETE" -> "DELETE FROM " + t.sql() + " t USING jsonb_array_elements(" + p + ") e(v) WHERE " + keyMatch(t, "t", "e.v");
        case "UPDATE" -> "UPDATE " + t.sql() + " t SET " + assignments(columns) + " FROM jsonb_array_elements(" + p
            + ") e(v) CROSS JOIN LATERAL jsonb_populate_record(NULL::" + t.sql() + ", e.v->'to') r WHERE " + keyMatch(t, "t", "e.v->'at'");
        default -> "INSERT INTO " + t.sql() + " (" + list("", columns) + ") OVERRIDING SYSTEM VALUE SELECT " + list("r.", columns)
            + " FROM jsonb_array_elements(" + p + ") e(v) CROSS JOIN LATERAL jsonb_populate_record(NULL::" + t.sql() + ", e.v) r";
      } + " RETURNING 1)");
      counts.add("(SELECT count(*) FROM " + name + ")");
    }
    String sql = "WITH " + String.join(", ", parts) + " SELECT " + String.join(" + ", counts);
    // what the tables' triggers, constraints and defaults would run, refused before anything is written back
    return functions.check(new FunctionGuard.Reach(Set.of(), Set.of(), writes), ErrorCode.PERMISSION_DENIED, "table")
        .compose(v -> conn.preparedQuery(sql).execute(params))
        .map(rs -> new ChangeTool.Applied(rs.iterator().next().getLong(0), null, false, ChangeTool.Report.of(report)));
  }

  private static String assignments(List<String> columns) {
    List<String> out = new ArrayList<>();
    for (String c : columns) {
      out.add(SqlText.quoteIdent(c) + " = r." + SqlText.quoteIdent(c));
    }
    return String.join(", ", out);
  }

  private static String list(String prefix, List<String> columns) {
    List<String> out = new ArrayList<>();
    for (String c : columns) {
      out.add(prefix + SqlText.quoteIdent(c));
    }
    return String.join(", ", out);
  }

  private static JsonArray keyValues(Target t, JsonObject at) {
    JsonArray out = new JsonArray();
    t.key().forEach(k -> out.add(at.getValue(k)));
    return out;
  }
}
