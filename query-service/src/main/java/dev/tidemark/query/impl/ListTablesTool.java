package dev.tidemark.query.impl;

import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.query.ReadTool;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Map;

/** {@code list_tables}: what the caller's role may read in the served schemas. */
public final class ListTablesTool implements ReadTool {

  /** Tidemark's own schema is never served, whatever the configuration says. */
  public static final String OWN_SCHEMA = "tidemark";

  private static final Map<String, String> KINDS = Map.of(
      "r", "table", "v", "view", "m", "materialized_view", "p", "partitioned_table", "f", "foreign_table");

  // runs on a connection that logged in as the caller's role, so has_table_privilege answers for that role
  private static final String SQL = """
      SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
             CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated_rows,
             obj_description(c.oid, 'pg_class') AS comment,
             COALESCE((SELECT array_agg(a.attname::text ORDER BY k.ord)
                         FROM pg_index i
                         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                        WHERE i.indrelid = c.oid AND i.indisprimary), '{}') AS primary_key
        FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
         AND NOT c.relispartition
         AND n.nspname = ANY($1) AND n.nspname <> 'tidemark'
         AND has_table_privilege(c.oid, 'SELECT')
       ORDER BY 1, 2""";

  private final DatabaseConfig database;

  public ListTablesTool(DatabaseConfig database) {
    this.database = database;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    List<String> schemas = database.schemas();
    String only = request.arguments().getString("schema");
    if (only != null) {
      if (!schemas.contains(only) || OWN_SCHEMA.equals(only)) {
        return Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND,
            "Schema '" + only + "' is not served here. Served schemas: " + String.join(", ", schemas) + ".",
            new JsonObject().put("argument", "schema")));
      }
      schemas = List.of(only);
    }
    String[] wanted = schemas.toArray(new String[0]);
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(),
            conn -> conn.preparedQuery(SQL).execute(Tuple.of(wanted)))
        .map(rows -> {
          JsonArray tables = new JsonArray();
          for (Row r : rows) {
            JsonObject t = new JsonObject()
                .put("schema", r.getString("schema"))
                .put("name", r.getString("name"))
                .put("kind", KINDS.get(r.getString("kind")));
            Long estimate = r.getLong("estimated_rows");
            if (estimate != null) {
              t.put("estimated_rows", estimate);
            }
            t.put("primary_key", new JsonArray(List.of(r.getArrayOfStrings("primary_key"))));
            String comment = r.getString("comment");
            if (comment != null) {
              t.put("comment", comment);
            }
            tables.add(t);
          }
          String summary = "list_tables: " + tables.size() + (tables.size() == 1 ? " table or view" : " tables and views")
              + " readable in " + String.join(", ", wanted);
          return ToolReply.ok(summary, new JsonObject().put("tables", tables), tables);
        });
  }
}
