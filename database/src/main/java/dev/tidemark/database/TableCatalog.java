package dev.tidemark.database;

import java.util.Objects;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Looks tables and their columns up in PostgreSQL's catalog, as the caller's role: only what the
 * role may read, in the served schemas, and never Tidemark's own schema. Every identifier a tool
 * puts into SQL comes from here and is double-quoted.
 */
public final class TableCatalog {

  /** Tidemark's own schema; never served. */
  public static final String OWN_SCHEMA = "tidemark";

  public static final Map<String, String> KINDS = Map.of(
      "r", "table", "v", "view", "m", "materialized_view", "p", "partitioned_table", "f", "foreign_table");

  /**
   * One column: its name, its type as written, the type to cast values to, its type category,
   * and, for an enum, its labels in their order (empty otherwise).
   */
  public record Column(String name, String type, String castType, boolean nullable, String defaultExpr, String comment, String category,
                       List<String> labels) {

    public Column(String name, String type, String castType, boolean nullable, String defaultExpr, String comment, String category) {
      this(name, type, castType, nullable, defaultExpr, comment, category, List.of());
    }

    public boolean isArray() {
      return "A".equals(category);
    }
  }

  /** One table or view the caller may read. */
  public record Table(long oid, String schema, String name, String kind, String comment, Long estimatedRows,
                      boolean rowLevelSecurity, List<String> primaryKey, Map<String, Column> columns, boolean builtInTypesOnly) {

    /** A table whose column types were not looked at: never read as one that runs no user code. */
    public Table(long oid, String schema, String name, String kind, String comment, Long estimatedRows,
                 boolean rowLevelSecurity, List<String> primaryKey, Map<String, Column> columns) {
      this(oid, schema, name, kind, comment, estimatedRows, rowLevelSecurity, primaryKey, columns, false);
    }

    public String qualified() {
      return schema + "." + name;
    }

    /**
     * Reading this relation runs no code that someone wrote: a table or materialized view without
     * row-level security and without partitions or inheritance children, whose every column has a
     * built-in type (or an enum with no cast of anyone's). A view, a foreign table or a policy may
     * call functions, and so may a domain's check (on a key value cast to it), a cast or operator
     * someone created for a type of theirs, or a foreign partition; a function may leave state on
     * the session (a setting, a lock, a LISTEN).
     */
    public boolean readRunsNoUserCode() {
      return !rowLevelSecurity && builtInTypesOnly && ("table".equals(kind) || "materialized_view".equals(kind));
    }

    /**
     * A comment naming this shape, to begin a statement built from it: a statement kept prepared
     * for one shape of the table is then never reused for another (PostgreSQL refuses to run a
     * prepared statement whose result type changed, and the same text would find the same one).
     */
    public String shapeTag() {
      return "/* " + oid + "." + Integer.toHexString(Objects.hash(primaryKey, columns)) + " */ ";
    }

    /** The quoted name to put into SQL. */
    public String sql() {
      return SqlText.quoteIdent(schema) + "." + SqlText.quoteIdent(name);
    }

    /** The column, or INVALID_ARGUMENTS naming the argument and the column. */
    public Column column(String column, String argument) {
      Column c = columns.get(column);
      if (c == null) {
        throw new ToolException(ErrorCode.INVALID_ARGUMENTS,
            "Table " + qualified() + " has no column '" + column + "' (in " + argument + "). Its columns: "
                + String.join(", ", columns.keySet()) + ".",
            new JsonObject().put("argument", argument).put("column", column));
      }
      return c;
    }
  }

  /**
   * What changes whenever the relation's row or its columns' rows in the catalog change, or its
   * primary key is another index: the transaction ids that wrote them. A cached shape whose
   * fingerprint is still the relation's is still its shape (ANALYZE and VACUUM update pg_class in
   * place, so they change nothing here). Of relation {@code c}.
   */
  static final String FINGERPRINT = """
      (c.xmin::text || ':' || coalesce((SELECT string_agg(a.attnum || '.' || a.xmin::text, ',' ORDER BY a.attnum)
                                          FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0), '')
                   || ':' || coalesce((SELECT string_agg(i.indexrelid::text, ',') FROM pg_index i
                                        WHERE i.indrelid = c.oid AND i.indisprimary), ''))""";

  private static final String TABLE_SQL_ANY_ROLE = """
      SELECT %2$s AS fingerprint, c.oid::int8 AS oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
             obj_description(c.oid, 'pg_class') AS comment, c.relrowsecurity AS rls,
             CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated_rows,
             COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                         FROM pg_index i
                         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                        WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS primary_key,
             COALESCE((SELECT json_agg(json_build_object(
                                'name', a.attname::text, 'type', format_type(a.atttypid, a.atttypmod),
                                'cast_type', format_type(a.atttypid, NULL), 'nullable', NOT a.attnotnull,
                                'default_expr', pg_get_expr(d.adbin, d.adrelid), 'comment', col_description(a.attrelid, a.attnum),
                                'category', t.typcategory::text,
                                'labels', (SELECT json_agg(e.enumlabel::text ORDER BY e.enumsortorder)
                                             FROM pg_enum e WHERE e.enumtypid = a.atttypid)) ORDER BY a.attnum)
                         FROM pg_attribute a
                         JOIN pg_type t ON t.oid = a.atttypid
                         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]'::json) AS columns,
             COALESCE((SELECT bool_and(t.oid < 16384 OR t.typtype = 'e' AND NOT EXISTS (
                                 SELECT 1 FROM pg_cast k WHERE k.castsource = t.oid OR k.casttarget = t.oid))
                         FROM pg_attribute a
                         JOIN pg_type t ON t.oid = a.atttypid
                        WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), false)
               AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhparent = c.oid) AS built_in_types_only
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
         AND n.nspname = ANY($1::text[]) AND n.nspname <> 'tidemark'
         AND c.relname = $2::text
       %1$s
       ORDER BY array_position($1::text[], n.nspname::text)
       LIMIT 1""";

  /** The lookup as the caller's role: only what it may read. Its result is never kept, so it needs no fingerprint. */
  private static final String TABLE_SQL = TABLE_SQL_ANY_ROLE.formatted("AND has_table_privilege(c.oid, 'SELECT')", "NULL::text");

  /** The lookup of a table's shape alone, for {@link CatalogCache}; who may read it is checked per call. */
  private static final String SHAPE_SQL = TABLE_SQL_ANY_ROLE.formatted("", FINGERPRINT);

  /** A table's shape and the {@link #FINGERPRINT} it had when it was looked up. */
  public record Shape(Table table, String fingerprint) {}

  private TableCatalog() {}

  /** Whether {@code sql} is one of the lookups this class sends (for the statement caches that keep them). */
  static boolean isLookup(String sql) {
    return TABLE_SQL.equals(sql) || SHAPE_SQL.equals(sql);
  }

  /**
   * The table named {@code table} (name or schema.name), looked up in {@code schemas} in order.
   * NOT_FOUND when it does not exist, is not served, is Tidemark's own, or the role may not read it.
   */
  public static Future<Table> resolve(SqlConnection conn, List<String> schemas, String table) {
    return lookup(conn, TABLE_SQL, schemas, table).map(Shape::table);
  }

  /**
   * The table's shape whoever asks: run as Tidemark's login, so the result may be shared by every
   * caller, and the caller's right to read the table must be checked separately.
   */
  public static Future<Shape> shape(SqlClient client, List<String> schemas, String table) {
    return lookup(client, SHAPE_SQL, schemas, table);
  }

  private static Future<Shape> lookup(SqlClient client, String sql, List<String> schemas, String table) {
    String schema = null;
    String name = table;
    int dot = table.indexOf('.');
    if (dot > 0 && dot < table.length() - 1) {
      schema = table.substring(0, dot);
      name = table.substring(dot + 1);
    }
    List<String> searched = new ArrayList<>();
    for (String s : schemas) {
      if (!OWN_SCHEMA.equals(s) && (schema == null || s.equals(schema))) {
        searched.add(s);
      }
    }
    if (searched.isEmpty()) {
      return Future.failedFuture(notFound(table, schemas));
    }
    String bare = name;
    return client.preparedQuery(sql).execute(Tuple.of(searched.toArray(new String[0]), name)).compose(rows -> {
      if (rows.size() == 0) {
        return Future.failedFuture(notFound(table, schemas));
      }
      Row r = rows.iterator().next();
      Map<String, Column> columns = new LinkedHashMap<>();
      for (Object o : columnsOf(r.getValue("columns"))) {
        JsonObject c = (JsonObject) o;
        columns.put(c.getString("name"), new Column(c.getString("name"), c.getString("type"), c.getString("cast_type"),
            c.getBoolean("nullable"), c.getString("default_expr"), c.getString("comment"), c.getString("category"),
            labels(c.getJsonArray("labels"))));
      }
      return Future.succeededFuture(new Shape(new Table(r.getLong("oid"), r.getString("schema"), bare, KINDS.get(r.getString("kind")),
          r.getString("comment"), r.getLong("estimated_rows"), r.getBoolean("rls"), List.of(r.getArrayOfStrings("primary_key")), columns,
          Boolean.TRUE.equals(r.getBoolean("built_in_types_only"))), r.getString("fingerprint")));
    });
  }

  private static List<String> labels(JsonArray labels) {
    return labels == null ? List.of() : labels.stream().map(String::valueOf).toList();
  }

  /** The columns come as one JSON array, so that the table and its columns take one round trip. */
  private static JsonArray columnsOf(Object value) {
    if (value instanceof JsonArray a) {
      return a;
    }
    return value == null ? new JsonArray() : new JsonArray(String.valueOf(value));
  }

  public static ToolException notFound(String table, List<String> schemas) {
    return new ToolException(ErrorCode.NOT_FOUND,
        "No table or view named '" + table + "' that you may read in the served schemas ("
            + String.join(", ", schemas.stream().filter(s -> !OWN_SCHEMA.equals(s)).toList()) + "). "
            + ErrorCode.NOT_FOUND.hint(),
        new JsonObject().put("argument", "table"));
  }
}
