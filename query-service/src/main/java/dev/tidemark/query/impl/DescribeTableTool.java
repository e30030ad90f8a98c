package dev.tidemark.query.impl;

import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.TableCatalog.Column;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.TableCatalog.Table;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.TableCatalog;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;

/** {@code describe_table}: of one table or several, columns, keys, foreign keys both ways, indexes, checks and row-level security. */
public final class DescribeTableTool implements ReadTool {

  private static final Map<String, String> ACTIONS = Map.of(
      "a", "no_action", "r", "restrict", "c", "cascade", "n", "set_null", "d", "set_default");

  private static final String FOREIGN_KEYS_SQL = """
      SELECT con.conname::text AS name, con.conrelid = $1::int8::oid AS outgoing, con.confrelid = $1::int8::oid AS incoming,
             sn.nspname::text AS src_schema, sc.relname::text AS src_table,
             tn.nspname::text AS dst_schema, tc.relname::text AS dst_table,
             ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(n, o)
                     JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS src_columns,
             ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(n, o)
                     JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS dst_columns,
             con.confupdtype::text AS on_update, con.confdeltype::text AS on_delete
        FROM pg_constraint con
        JOIN pg_class sc ON sc.oid = con.conrelid JOIN pg_namespace sn ON sn.oid = sc.relnamespace
        JOIN pg_class tc ON tc.oid = con.confrelid JOIN pg_namespace tn ON tn.oid = tc.relnamespace
       WHERE con.contype = 'f' AND (con.conrelid = $1::int8::oid OR con.confrelid = $1::int8::oid)
         AND sn.nspname <> 'tidemark' AND tn.nspname <> 'tidemark'
       ORDER BY sn.nspname, sc.relname, con.conname""";

  // the primary key's index only repeats primary_key, and "CREATE INDEX name ON table" only repeats the name and table
  private static final String INDEXES_SQL = """
      SELECT ic.relname::text AS name, i.indisunique AS is_unique, i.indisprimary AS is_primary,
             regexp_replace(pg_get_indexdef(i.indexrelid), '^.*? USING ', '') AS definition
        FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
       WHERE i.indrelid = $1::int8::oid AND NOT i.indisprimary
       ORDER BY ic.relname""";

  private static final String CHECKS_SQL = """
      SELECT conname::text AS name, pg_get_constraintdef(oid) AS definition
        FROM pg_constraint WHERE conrelid = $1::int8::oid AND contype = 'c'
       ORDER BY conname""";

  private final DatabaseConfig database;

  public DescribeTableTool(DatabaseConfig database) {
    this.database = database;
  }

  /** The most tables one call describes: enough for a schema, bounded like every other answer. */
  static final int MAX_TABLES = 50;

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    String one = args.getString("table");
    JsonArray many = args.getJsonArray("tables");
    if ((one == null) == (many == null)) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "Name the table to describe as table, or several as tables, not both and not neither.",
          new JsonObject().put("argument", "table")));
    }
    List<String> names = new ArrayList<>();
    if (many != null) {
      many.forEach(n -> names.add((String) n));
    } else {
      names.add(one);
    }
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> {
      Future<List<Table>> resolved = Future.succeededFuture(new ArrayList<>());
      for (int i = 0; i < names.size(); i++) {
        String name = names.get(i);
        String argument = many == null ? "table" : "tables/" + i;
        resolved = resolved.compose(list -> TableCatalog.resolve(conn, database.schemas(), name)
            .recover(err -> Future.failedFuture(argumentNamed(err, argument)))
            .map(t -> {
              list.add(t);
              return list;
            }));
      }
      return resolved.compose(tables -> {
        Set<String> described = new HashSet<>();
        tables.forEach(t -> described.add(t.schema() + "." + t.name()));
        Future<List<JsonObject>> out = Future.succeededFuture(new ArrayList<>());
        for (Table table : tables) {
          out = out.compose(list -> describe(conn, table, described).map(d -> {
            list.add(d);
            return list;
          }));
        }
        return out.map(list -> reply(list, many != null));
      });
    });
  }

  /** A NOT_FOUND or INVALID_ARGUMENTS for one table, naming the element of tables it came from. */
  private static Throwable argumentNamed(Throwable err, String argument) {
    if (err instanceof ToolException e && !"table".equals(argument)) {
      return new ToolException(e.code(), e.getMessage(), e.details().copy().put("argument", argument));
    }
    return err;
  }

  /**
   * The text carries what the structured content does, as blocks of one fence: the tables, their
   * columns, foreign keys out and in, indexes and checks, each row naming its table when the call
   * described several. A host may show the model only the text, so it leaves nothing out.
   */
  private static ToolReply reply(List<JsonObject> tables, boolean many) {
    JsonArray about = new JsonArray();
    JsonArray columns = new JsonArray();
    JsonArray outgoing = new JsonArray();
    JsonArray incoming = new JsonArray();
    JsonArray indexes = new JsonArray();
    JsonArray checks = new JsonArray();
    for (JsonObject t : tables) {
      String qualified = t.getString("schema") + "." + t.getString("name");
      JsonObject table = new JsonObject().put("table", qualified).put("kind", t.getString("kind"))
          .put("primary_key", t.getJsonArray("primary_key")).put("row_level_security", t.getBoolean("row_level_security"))
          .put("estimated_rows", t.getValue("estimated_rows")).put("comment", t.getString("comment"));
      about.add(table);
      for (Object o : t.getJsonArray("columns")) {
        JsonObject c = (JsonObject) o;
        columns.add(row(qualified, many).put("column", c.getString("name")).put("type", c.getString("type"))
            .put("nullable", c.getBoolean("nullable")).put("default", c.getString("default")).put("comment", c.getString("comment"))
            .put("labels", c.getJsonArray("labels")));
      }
      for (Object o : t.getJsonArray("foreign_keys")) {
        JsonObject fk = (JsonObject) o;
        JsonObject to = fk.getJsonObject("references");
        outgoing.add(row(qualified, many).put("foreign_key", fk.getString("name")).put("columns", fk.getJsonArray("columns"))
            .put("references", to.getString("schema") + "." + to.getString("table")).put("referenced_columns", to.getJsonArray("columns"))
            .put("on_update", fk.getString("on_update")).put("on_delete", fk.getString("on_delete")));
      }
      for (Object o : t.getJsonArray("referenced_by")) {
        JsonObject fk = (JsonObject) o;
        incoming.add(row(qualified, many).put("referenced_by", fk.getString("schema") + "." + fk.getString("table"))
            .put("foreign_key", fk.getString("name")).put("columns", fk.getJsonArray("columns"))
            .put("referenced_columns", fk.getJsonArray("referenced_columns"))
            .put("on_update", fk.getString("on_update")).put("on_delete", fk.getString("on_delete")));
      }
      for (Object o : t.getJsonArray("indexes")) {
        JsonObject i = (JsonObject) o;
        indexes.add(row(qualified, many).put("index", i.getString("name")).put("unique", i.getBoolean("unique"))
            .put("primary", i.getBoolean("primary")).put("definition", i.getString("definition")));
      }
      for (Object o : t.getJsonArray("checks")) {
        JsonObject c = (JsonObject) o;
        checks.add(row(qualified, many).put("check", c.getString("name")).put("definition", c.getString("definition")));
      }
    }
    String summary = "describe_table: " + tables.size() + (tables.size() == 1 ? " table" : " tables")
        + ", then their columns, foreign keys out and in, indexes and checks";
    JsonArray blocks = new JsonArray().add(about).add(columns).add(outgoing).add(incoming).add(indexes).add(checks);
    return many ? ToolReply.ok(summary, new JsonObject().put("tables", new JsonArray(new ArrayList<>(tables))), blocks)
        : ToolReply.ok(summary, tables.get(0), blocks);
  }

  /** A row of a block of the text: it names its table when the call described several. */
  private static JsonObject row(String qualified, boolean many) {
    return many ? new JsonObject().put("table", qualified) : new JsonObject();
  }

  /**
   * One table. {@code described} are the tables of the same call: a foreign key between two of
   * them is shown once, in foreign_keys of the table that holds it, not again in referenced_by.
   */
  private static Future<JsonObject> describe(SqlConnection conn, Table table, Set<String> described) {
    Tuple oid = Tuple.of(table.oid());
    return conn.preparedQuery(FOREIGN_KEYS_SQL).execute(oid)
        .compose(fks -> conn.preparedQuery(INDEXES_SQL).execute(oid)
            .compose(idx -> conn.preparedQuery(CHECKS_SQL).execute(oid).map(checks -> {
              JsonObject out = new JsonObject().put("schema", table.schema()).put("name", table.name()).put("kind", table.kind());
              if (table.comment() != null) {
                out.put("comment", table.comment());
              }
              if (table.estimatedRows() != null) {
                out.put("estimated_rows", table.estimatedRows());
              }
              out.put("row_level_security", table.rowLevelSecurity());
              JsonArray columns = new JsonArray();
              for (Column c : table.columns().values()) {
                JsonObject col = new JsonObject().put("name", c.name()).put("type", c.type()).put("nullable", c.nullable());
                if (c.defaultExpr() != null) {
                  col.put("default", c.defaultExpr());
                }
                if (c.comment() != null) {
                  col.put("comment", c.comment());
                }
                if (!c.labels().isEmpty()) {
                  col.put("labels", new JsonArray(c.labels()));
                }
                columns.add(col);
              }
              out.put("columns", columns).put("primary_key", new JsonArray(table.primaryKey()));
              JsonArray outgoing = new JsonArray();
              JsonArray incoming = new JsonArray();
              for (Row r : fks) {
                if (r.getBoolean("outgoing")) {
                  outgoing.add(new JsonObject().put("name", r.getString("name"))
                      .put("columns", strings(r, "src_columns"))
                      .put("references", new JsonObject().put("schema", r.getString("dst_schema"))
                          .put("table", r.getString("dst_table")).put("columns", strings(r, "dst_columns")))
                      .put("on_update", ACTIONS.get(r.getString("on_update")))
                      .put("on_delete", ACTIONS.get(r.getString("on_delete"))));
                }
                boolean shownWithItsTable = described.contains(r.getString("src_schema") + "." + r.getString("src_table"))
                    && described.size() > 1;
                if (r.getBoolean("incoming") && !shownWithItsTable) {
                  incoming.add(new JsonObject().put("name", r.getString("name"))
                      .put("schema", r.getString("src_schema")).put("table", r.getString("src_table"))
                      .put("columns", strings(r, "src_columns")).put("referenced_columns", strings(r, "dst_columns"))
                      .put("on_update", ACTIONS.get(r.getString("on_update")))
                      .put("on_delete", ACTIONS.get(r.getString("on_delete"))));
                }
              }
              out.put("foreign_keys", outgoing).put("referenced_by", incoming);
              JsonArray indexes = new JsonArray();
              for (Row r : idx) {
                indexes.add(new JsonObject().put("name", r.getString("name")).put("unique", r.getBoolean("is_unique"))
                    .put("primary", r.getBoolean("is_primary")).put("definition", r.getString("definition")));
              }
              JsonArray checkList = new JsonArray();
              for (Row r : checks) {
                checkList.add(new JsonObject().put("name", r.getString("name")).put("definition", r.getString("definition")));
              }
              return out.put("indexes", indexes).put("checks", checkList);
            })));
  }

  private static JsonArray strings(Row r, String column) {
    return new JsonArray(List.of(r.getArrayOfStrings(column)));
  }
}
