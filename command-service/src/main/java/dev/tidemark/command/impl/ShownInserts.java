package dev.tidemark.command.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.SqlText;
import dev.tidemark.database.TableCatalog.Column;
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
import java.util.function.Supplier;

/**
 * The rows a proposal showed its change inserting, written by the approval with the values shown.
 * A plain insert (its rows are the ones its own statement gives: insert_rows, or an INSERT of a
 * VALUES list) takes some values only when PostgreSQL writes the row: a sequence's next value, a
 * default's {@code now()}. Run again, it would take other ones, and never write what was shown; so
 * the approval inserts the shown after-image of each row its statements inserted instead, every
 * column but the generated ones, identity columns included ({@code OVERRIDING SYSTEM VALUE}), as
 * the proposer's role, bound as {@code insert_rows} binds values. What PostgreSQL then writes (a
 * BEFORE trigger may still change a row, an AFTER trigger write rows elsewhere) is compared with
 * what was shown as for any approval ({@link ChangeSet#imagesHash}). See docs/change-tools.md.
 */
public final class ShownInserts {

  /** A table a plain INSERT writes, named as the capture triggers name it. */
  public record Target(String schema, String name) {

    String qualified() {
      return schema + "." + name;
    }
  }

  /** The rows of one table that are inserted together, in the order shown. */
  record Run(Target table, List<JsonObject> rows) {}

  /** The most values one statement binds: PostgreSQL takes at most 65,535 parameters. */
  static final int MAX_VALUES = 32_767;

  /**
   * The columns of the tables to write, as the proposer's role sees them in the approval's own
   * transaction: their types, whether PostgreSQL generates them, and whether the role may insert them.
   */
  private static final String COLUMNS_SQL = """
      SELECT s.nsp AS schema, s.rel AS name, c.relkind::text AS kind, a.attname::text AS column,
             format_type(a.atttypid, a.atttypmod) AS type, format_type(a.atttypid, NULL) AS cast_type, t.typcategory::text AS category,
             a.attgenerated <> '' AS generated, has_column_privilege(c.oid, a.attnum, 'INSERT') AS insertable
        FROM unnest($1::text[], $2::text[]) AS s(nsp, rel)
        JOIN pg_namespace n ON n.nspname = s.nsp
        JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.rel
        JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        JOIN pg_type t ON t.oid = a.atttypid
       ORDER BY s.nsp, s.rel, a.attnum""";

  /** A column of a table to write. */
  private record Col(Column column, boolean generated, boolean insertable) {}

  private final JsonArray shown;

  /** @param shown the rows the proposal showed ({@link ChangeSet#rows}) */
  public ShownInserts(JsonArray shown) {
    this.shown = shown;
  }

  /**
   * Inserts the shown rows of {@code targets}, the tables a change's plain inserts write, on
   * {@code conn} in the approval's transaction. When one of them is not an ordinary table (a
   * partitioned table's rows are captured in its partitions), or the proposer's role may not
   * insert a column whose shown value would be written, the change runs again instead
   * ({@code otherwise}), as every other change does.
   */
  Future<ChangeTool.Applied> write(SqlConnection conn, FunctionGuard functions, List<Target> targets,
      Supplier<Future<ChangeTool.Applied>> otherwise) {
    List<Run> runs = runs(shown, targets);
    Map<String, Target> distinct = new LinkedHashMap<>();
    targets.forEach(t -> distinct.put(t.qualified(), t));
    Tuple names = Tuple.tuple().addValue(distinct.values().stream().map(Target::schema).toArray(String[]::new))
        .addValue(distinct.values().stream().map(Target::name).toArray(String[]::new));
    return conn.preparedQuery(COLUMNS_SQL).execute(names).compose(rows -> {
      Map<String, Map<String, Col>> columns = new LinkedHashMap<>();
      boolean ordinary = true;
      for (Row r : rows) {
        ordinary &= "r".equals(r.getString("kind"));
        Column c = new Column(r.getString("column"), r.getString("type"), r.getString("cast_type"), true, null, null,
            r.getString("category"));
        columns.computeIfAbsent(r.getString("schema") + "." + r.getString("name"), t -> new LinkedHashMap<>())
            .put(c.name(), new Col(c, r.getBoolean("generated"), r.getBoolean("insertable")));
      }
      if (!ordinary || !columns.keySet().containsAll(distinct.keySet())) {
        return otherwise.get();
      }
      List<Statement> statements = new ArrayList<>();
      for (Run run : runs) {
        List<Column> written = written(run, columns.get(run.table().qualified()));
        if (written == null) {
          return otherwise.get();
        }
        statements.addAll(statements(run, written));
      }
      Future<Long> chain = Future.succeededFuture(0L);
      for (Statement s : statements) {
        chain = chain.compose(total -> functions.check(FunctionGuard.Reach.writing(s.table().schema(), s.table().name(), "i"),
                ErrorCode.PERMISSION_DENIED, "table")
            .compose(v -> conn.preparedQuery(s.sql()).execute(s.params().tuple()))
            .map(result -> total + result.rowCount()));
      }
      return chain.map(n -> new ChangeTool.Applied(n, null, false));
    });
  }

  /**
   * The shown INSERT rows of {@code targets}, in the order shown, one run per stretch of rows of
   * one table: rows that other tables' rows (a trigger's, a cascade's) come between are written
   * in the order the change wrote them, so a foreign key between two targets finds its row.
   */
  static List<Run> runs(JsonArray shown, List<Target> targets) {
    Map<String, Target> byName = new LinkedHashMap<>();
    targets.forEach(t -> byName.put(t.qualified(), t));
    List<Run> out = new ArrayList<>();
    for (Object o : shown) {
      JsonObject row = (JsonObject) o;
      Target t = byName.get(row.getString("table"));
      if (t == null || !"INSERT".equals(row.getString("op")) || row.getJsonObject("after") == null) {
        continue;
      }
      if (out.isEmpty() || !out.get(out.size() - 1).table().equals(t)) {
        out.add(new Run(t, new ArrayList<>()));
      }
      out.get(out.size() - 1).rows().add(row.getJsonObject("after"));
    }
    return out;
  }

  /**
   * The columns a run writes: every column its rows show that PostgreSQL does not generate, in
   * the table's order; null when the role may not insert one of them (then it runs again).
   */
  private static List<Column> written(Run run, Map<String, Col> columns) {
    List<Column> out = new ArrayList<>();
    for (Col c : columns.values()) {
      if (c.generated() || run.rows().stream().noneMatch(r -> r.containsKey(c.column().name()))) {
        continue;  // a generated column is computed again, and compared; a column added since takes its default
      }
      if (!c.insertable()) {
        return null;
      }
      out.add(c.column());
    }
    return out;
  }

  /** One INSERT of some rows of a run. */
  private record Statement(Target table, String sql, SqlParams params) {}

  private static List<Statement> statements(Run run, List<Column> columns) {
    int perStatement = Math.max(1, MAX_VALUES / Math.max(1, columns.size()));
    String head = "INSERT INTO " + SqlText.quoteIdent(run.table().schema()) + "." + SqlText.quoteIdent(run.table().name()) + " ("
        + String.join(", ", columns.stream().map(c -> SqlText.quoteIdent(c.name())).toList()) + ") OVERRIDING SYSTEM VALUE VALUES ";
    List<Statement> out = new ArrayList<>();
    for (int from = 0; from < run.rows().size(); from += perStatement) {
      SqlParams params = new SqlParams();
      List<String> tuples = new ArrayList<>();
      for (int i = from; i < Math.min(run.rows().size(), from + perStatement); i++) {
        JsonObject row = run.rows().get(i);
        List<String> values = new ArrayList<>();
        for (Column c : columns) {
          values.add(!row.containsKey(c.name()) ? "DEFAULT"
              : Sql.value(row.getValue(c.name()), c, "proposal", "/rows/" + i + "/" + c.name(), params));
        }
        tuples.add("(" + String.join(", ", values) + ")");
      }
      out.add(new Statement(run.table(), head + String.join(", ", tuples), params));
    }
    return out;
  }
}
