package dev.tidemark.command.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.command.Canonical;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.SqlText;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code migrate}: DDL statements, in order, in the change's transaction, as the caller's role.
 * What they did is read from the catalogs before and after, in the same transaction: every served
 * table created, altered or dropped, with its definition and rows, and what is removed for good.
 * PostgreSQL checks the caller's privileges on every statement; this tool narrows what a migration
 * may do beyond that, in two ways. A statement's leading keywords must name one of the kinds it
 * runs (as {@link WriteGuard} picks an error code: PostgreSQL names a statement's kind only by
 * running it). And what the statements did, as the catalogs show it, must stay within served
 * tables and their indexes and constraints: roles, schemas, functions, policies, event triggers,
 * extensions and relations elsewhere unchanged, and Tidemark's capture of every table that remains
 * (its triggers and replica identity) untouched.
 */
public final class MigrateTool implements ChangeTool {

  /** How long each statement waits for its locks: a DDL lock queued behind a long transaction would stall every writer behind it. */
  static final long LOCK_TIMEOUT_MS = 5_000;

  /** The kinds of statement a migration runs, by their leading keywords. */
  private static final List<String> KINDS = List.of("create table", "create unlogged table", "alter table", "drop table",
      "create index", "create unique index", "alter index", "drop index", "comment on table", "comment on column",
      "comment on index", "comment on constraint");

  private static final String SNAPSHOT_SQL = """
      SELECT
        (SELECT coalesce(json_agg(json_build_object(
                  'oid', c.oid::int8, 'table', n.nspname || '.' || c.relname, 'sql', format('%I.%I', n.nspname, c.relname),
                  'replica_identity', c.relreplident::text, 'filenode', pg_relation_filenode(c.oid)::int8,
                  'guarded', concat_ws(':', c.relowner, c.relacl, c.relrowsecurity, c.relforcerowsecurity),
                  'columns', (SELECT coalesce(json_agg(json_build_object('attnum', a.attnum, 'name', a.attname::text,
                                  'type', format_type(a.atttypid, a.atttypmod), 'nullable', NOT a.attnotnull,
                                  'default', pg_get_expr(d.adbin, d.adrelid)) ORDER BY a.attnum), '[]')
                                FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                               WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped),
                  'indexes', (SELECT coalesce(json_agg(pg_get_indexdef(i.indexrelid) ORDER BY pg_get_indexdef(i.indexrelid)), '[]')
                                FROM pg_index i WHERE i.indrelid = c.oid),
                  'constraints', (SELECT coalesce(json_agg(k.conname || ' ' || pg_get_constraintdef(k.oid) ORDER BY k.conname), '[]')
                                    FROM pg_constraint k WHERE k.conrelid = c.oid),
                  'triggers', (SELECT coalesce(json_agg(t.tgname || ' ' || t.tgenabled::text ORDER BY t.tgname), '[]')
                                 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal)) ORDER BY c.oid), '[]')
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1::text[]) AND n.nspname <> 'tidemark') AS tables,
        md5(concat_ws('|',
          (SELECT string_agg(concat_ws(':', r.oid, r.rolname, r.rolsuper, r.rolinherit, r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
                                        r.rolreplication, r.rolbypassrls), ',' ORDER BY r.oid) FROM pg_roles r),
          (SELECT string_agg(concat_ws(':', m.roleid, m.member, m.admin_option), ',' ORDER BY m.roleid, m.member) FROM pg_auth_members m),
          (SELECT string_agg(concat_ws(':', s.oid, s.nspname, s.nspowner, s.nspacl), ',' ORDER BY s.oid) FROM pg_namespace s),
          (SELECT string_agg(concat_ws(':', p.oid, p.proname, p.proowner, p.proacl, p.prosecdef, md5(p.prosrc)), ',' ORDER BY p.oid)
             FROM pg_proc p WHERE p.oid >= 16384),
          (SELECT string_agg(concat_ws(':', p.oid, p.polname, p.polrelid, p.polcmd, p.polroles, pg_get_expr(p.polqual, p.polrelid),
                                        pg_get_expr(p.polwithcheck, p.polrelid)), ',' ORDER BY p.oid) FROM pg_policy p),
          (SELECT count(*) FROM pg_class t WHERE t.relnamespace = pg_my_temp_schema()),
          (SELECT string_agg(concat_ws(':', v.oid, v.relname, v.relkind, v.relowner, v.relacl), ',' ORDER BY v.oid)
             FROM pg_class v JOIN pg_namespace vn ON vn.oid = v.relnamespace
            WHERE v.relkind IN ('v', 'm', 'f') AND vn.nspname = ANY($1::text[])),
          (SELECT string_agg(concat_ws(':', e.oid, e.evtenabled), ',' ORDER BY e.oid) FROM pg_event_trigger e),
          (SELECT string_agg(x.oid::text, ',' ORDER BY x.oid) FROM pg_extension x),
          (SELECT string_agg(concat_ws(':', c.oid, c.relname, c.relkind, c.relowner, c.relacl, c.relnatts, c.relreplident,
                    (SELECT string_agg(concat_ws(':', a.attname, a.atttypid, a.attnotnull), ',' ORDER BY a.attnum)
                       FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped)), ',' ORDER BY c.oid)
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE (n.nspname <> ALL($1::text[]) OR n.nspname = 'tidemark')
              AND n.nspname NOT IN ('pg_toast', 'pg_catalog', 'information_schema')
              AND n.nspname NOT LIKE 'pg\\_temp\\_%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%'))) AS protected""";

  private final DatabaseConfig database;
  private final FunctionGuard functions;

  public MigrateTool(DatabaseConfig database, FunctionGuard functions) {
    this.database = database;
    this.functions = functions;
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    return applyReturning(conn, args, false).map(Applied::affected);
  }

  /** The catalogs' view of the served tables, and a digest of everything a migration must leave alone. */
  private record Snapshot(Map<Long, JsonObject> tables, String protectedDigest) {}

  @Override
  public Future<Applied> applyReturning(SqlConnection conn, JsonObject args, boolean commit) {
    JsonArray statements = args.getJsonArray("statements");
    for (int i = 0; i < statements.size(); i++) {
      if (!isMigration(statements.getString(i))) {
        return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "The statement in statements/" + i + " is not one"
            + " migrate runs: only CREATE TABLE, ALTER TABLE, DROP TABLE, CREATE INDEX, ALTER INDEX, DROP INDEX and COMMENT ON, one"
            + " statement each. Change rows with the change tools and read with query. Nothing was written.",
            new JsonObject().put("argument", "statements/" + i)));
      }
    }
    return conn.query("SET LOCAL lock_timeout = " + LOCK_TIMEOUT_MS).execute()
        .compose(x -> probe(conn, statements, 0))
        .compose(x -> conn.query("SAVEPOINT tidemark_migrate").execute())
        .compose(x -> snapshot(conn))
        .compose(before -> run(conn, statements, 0).compose(x -> snapshot(conn))
            .compose(after -> refuseReached(conn, before, after).map(after))
            .compose(after -> report(conn, statements, before, after)));
  }

  /** Whether {@code sql}'s leading keywords name a kind of statement migrate runs. */
  static boolean isMigration(String sql) {
    String rest = leading(sql).toLowerCase(Locale.ROOT).replaceAll("\\s+", " ");
    return KINDS.stream().anyMatch(k -> rest.startsWith(k + " "));
  }

  /**
   * {@code sql} from its first token on, past whitespace and comments as PostgreSQL reads them:
   * a line comment ends at a line feed or a carriage return, and block comments nest.
   */
  static String leading(String sql) {
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
        while (i < n && sql.charAt(i) != '\n' && sql.charAt(i) != '\r') {
          i++;
        }
      } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
        int depth = 0;
        do {
          if (sql.startsWith("/*", i)) {
            depth++;
            i += 2;
          } else if (sql.startsWith("*/", i)) {
            depth--;
            i += 2;
          } else {
            i++;
          }
        } while (depth > 0 && i < n);
        if (depth > 0) {
          return "";  // an unterminated comment: nothing runs
        }
      } else {
        break;
      }
    }
    return sql.substring(i);
  }

  /**
   * Refuses a statement that carries a query (CREATE TABLE ... AS, whose query could change rows
   * no plan shows), as PostgreSQL classifies it: it can EXPLAIN such a statement, and refuses to
   * EXPLAIN any other DDL with a syntax error. Each probe runs in a savepoint, since a refused
   * EXPLAIN aborts the transaction.
   */
  private static Future<Void> probe(SqlConnection conn, JsonArray statements, int from) {
    if (from == statements.size()) {
      return Future.succeededFuture();
    }
    String at = "statements/" + from;
    return conn.query("SAVEPOINT tidemark_probe").execute()
        .compose(x -> conn.preparedQuery("EXPLAIN " + statements.getString(from)).execute())
        .transform(explained -> {
          if (explained.failed() && SqlStates.is(explained.cause(), SqlStates.SYNTAX_ERROR)) {
            return conn.query("ROLLBACK TO SAVEPOINT tidemark_probe").execute().compose(x -> probe(conn, statements, from + 1));
          }
          return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "The statement in " + at + " runs a query (such"
              + " as CREATE TABLE ... AS): migrate changes the schema only. Create the table empty, then fill it with insert_rows or"
              + " execute, which plan and show the rows. Nothing was written.", new JsonObject().put("argument", at)));
        });
  }

  /**
   * Refuses a migration whose new CHECK constraints, defaults, generated columns, indexes,
   * partition keys or column types (a domain's checks) reach a function the function check
   * refuses: each would run for every caller that writes the table. What the current transaction
   * wrote in the catalog is what the migration made; what a table had before stays its owner's.
   */
  private Future<Void> refuseReached(SqlConnection conn, Snapshot before, Snapshot after) {
    List<Long> changed = new ArrayList<>();
    after.tables().forEach((oid, t) -> {
      JsonObject was = before.tables().get(oid);
      if (was == null || !definition(was).equals(definition(t))) {
        changed.add(oid);
      }
    });
    if (changed.isEmpty()) {
      return Future.succeededFuture();
    }
    return conn.query("SELECT pg_current_xact_id()::xid::text").execute()
        .compose(rows -> functions.created(conn, changed, rows.iterator().next().getString(0)))
        .compose(refused -> refused.isEmpty() ? Future.succeededFuture() : Future.failedFuture(new ToolException(
            ErrorCode.INVALID_ARGUMENTS, "The migration creates what would make PostgreSQL run functions Tidemark never runs for a"
                + " caller: " + FunctionGuard.describe(refused) + ". A table's constraints, defaults, generated columns, indexes and"
                + " column types run for every caller that writes it, so migrate creates none that reach such a function. Change the"
                + " statements. Nothing was written.",
            FunctionGuard.details(refused).put("argument", "statements").put("reason", "function_refused"))));
  }

  private Future<Snapshot> snapshot(SqlConnection conn) {
    return conn.preparedQuery(SNAPSHOT_SQL).execute(Tuple.of(database.schemas().toArray(new String[0]))).map(rows -> {
      Row r = rows.iterator().next();
      Map<Long, JsonObject> tables = new LinkedHashMap<>();
      for (Object o : (JsonArray) r.getValue("tables")) {
        JsonObject t = (JsonObject) o;
        tables.put(t.getLong("oid"), t);
      }
      return new Snapshot(tables, r.getString("protected"));
    });
  }

  /** Runs the statements in order, each alone (the extended protocol takes one statement), blaming a failure on its own. */
  private static Future<Void> run(SqlConnection conn, JsonArray statements, int from) {
    if (from == statements.size()) {
      return Future.succeededFuture();
    }
    String at = "statements/" + from;
    return conn.preparedQuery(statements.getString(from)).execute()
        .recover(err -> Future.failedFuture(failed(err, at)))
        // a statement runs as the caller's role alone: an expression in it (a default, a check) that switched role is refused
        .compose(x -> conn.query("SELECT current_user = session_user").execute())
        .compose(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)) ? run(conn, statements, from + 1)
            : Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED, "The statement in " + at + " switched its database"
                + " role; a migration runs only as your role. Nothing was written.", new JsonObject().put("argument", at))));
  }

  private static Throwable failed(Throwable err, String at) {
    if (err instanceof PgException pg && pg.getSqlState() != null && !SqlStates.inClass(err, SqlStates.TRANSACTION_ROLLBACK)
        && !SqlStates.is(err, SqlStates.INSUFFICIENT_PRIVILEGE, SqlStates.QUERY_CANCELED, SqlStates.LOCK_NOT_AVAILABLE)) {
      // the caller's own DDL: PostgreSQL's message says what is wrong with it, and names only what the statement names
      return new ToolException(ErrorCode.INVALID_ARGUMENTS, "The statement in " + at + " failed: " + pg.getErrorMessage()
          + " (SQLSTATE " + pg.getSqlState() + "). Fix it and plan the migration again. Nothing was written.",
          new JsonObject().put("argument", at).put("sqlstate", pg.getSqlState()));
    }
    if (SqlStates.is(err, SqlStates.LOCK_NOT_AVAILABLE)) {
      return new ToolException(ErrorCode.CONFLICT, "The statement in " + at + " waited more than " + LOCK_TIMEOUT_MS / 1000 + " s for a"
          + " lock another transaction holds on the table, and gave up so that it would not stall the table's other users. Retry"
          + " when the table is quieter. Nothing was written.", new JsonObject().put("argument", at).put("sqlstate", SqlStates.LOCK_NOT_AVAILABLE));
    }
    return err;
  }

  private Future<Applied> report(SqlConnection conn, JsonArray statements, Snapshot before, Snapshot after) {
    if (!before.protectedDigest().equals(after.protectedDigest())) {
      return Future.failedFuture(outside("roles, schemas, functions, policies, event triggers, extensions or relations outside the"
          + " served tables"));
    }
    List<JsonObject> tables = new ArrayList<>();
    List<JsonObject> lost = new ArrayList<>();
    List<String> dropped = new ArrayList<>();
    for (Map.Entry<Long, JsonObject> e : before.tables().entrySet()) {
      JsonObject was = e.getValue();
      JsonObject now = after.tables().get(e.getKey());
      if (now == null) {
        tables.add(new JsonObject().put("table", was.getString("table")).put("action", "dropped").put("before", definition(was))
            .put("sql", was.getString("sql")));
        lost.add(new JsonObject().put("table", was.getString("table")).put("sql", was.getString("sql")));
        dropped.add(was.getString("table"));
        continue;
      }
      if (!was.getString("guarded").equals(now.getString("guarded"))) {
        return Future.failedFuture(outside("the owner, the grants or the row-level security of " + was.getString("table")));
      }
      if (!was.getString("replica_identity").equals(now.getString("replica_identity"))) {
        return Future.failedFuture(outside("the replica identity of " + was.getString("table") + ", which Tidemark's capture needs"));
      }
      JsonArray nowTriggers = now.getJsonArray("triggers");
      for (Object trigger : was.getJsonArray("triggers")) {
        if (!nowTriggers.contains(trigger)) {
          return Future.failedFuture(outside("a trigger of " + was.getString("table")));
        }
      }
      if (nowTriggers.size() != was.getJsonArray("triggers").size()) {
        return Future.failedFuture(outside("the triggers of " + was.getString("table")));
      }
      boolean rewritten = !was.getLong("filenode").equals(now.getLong("filenode"));
      if (rewritten || !definition(was).equals(definition(now)) || !was.getString("table").equals(now.getString("table"))) {
        JsonObject altered = new JsonObject().put("table", now.getString("table")).put("action", "altered").put("before", definition(was))
            .put("after", definition(now)).put("sql", now.getString("sql"));
        if (!was.getString("table").equals(now.getString("table"))) {
          altered.put("renamed_from", was.getString("table"));
        }
        tables.add(altered);
        if (rewritten) {
          // every row was written anew (a type change, a volatile default, USING): what it held may be gone, and no change shows it
          lost.add(new JsonObject().put("table", now.getString("table")).put("rewritten", true).put("sql", was.getString("sql")));
        }
        for (Object o : was.getJsonArray("columns")) {
          JsonObject column = (JsonObject) o;
          if (now.getJsonArray("columns").stream().noneMatch(c -> ((JsonObject) c).getInteger("attnum").equals(column.getInteger("attnum")))) {
            lost.add(new JsonObject().put("table", now.getString("table")).put("column", column.getString("name"))
                .put("sql", was.getString("sql")));
          }
        }
      }
    }
    for (Map.Entry<Long, JsonObject> e : after.tables().entrySet()) {
      if (!before.tables().containsKey(e.getKey())) {
        JsonObject now = e.getValue();
        for (Object trigger : now.getJsonArray("triggers")) {
          // Tidemark's own plan triggers, which its event trigger puts on a new table in the same transaction
          String t = String.valueOf(trigger);
          if (!t.startsWith("tidemark_capture ") && !t.startsWith("tidemark_capture_truncate ")) {
            return Future.failedFuture(outside("triggers: a new table gets none through migrate"));
          }
        }
        tables.add(new JsonObject().put("table", now.getString("table")).put("action", "created").put("after", definition(now))
            .put("sql", now.getString("sql")));
      }
    }
    return rowsOf(conn, tables, "altered", "created").compose(x -> {
      for (JsonObject t : tables) {
        if ("created".equals(t.getString("action")) && t.getLong("rows") > 0) {
          return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "The migration creates " + t.getString("table")
              + " with rows in it (CREATE TABLE ... AS): migrate changes the schema only. Create the table empty, then fill it with"
              + " insert_rows or execute, which plan and show the rows. Nothing was written.",
              new JsonObject().put("argument", "statements").put("table", t.getString("table"))));
        }
      }
      if (lost.isEmpty()) {
        return Future.succeededFuture(lost);
      }
      // what is lost is counted as it is before the migration: back to the savepoint, count, and run the statements again
      return conn.query("ROLLBACK TO SAVEPOINT tidemark_migrate").execute()
          .compose(y -> countLost(conn, lost, 0))
          .compose(y -> rowsOf(conn, tables, "dropped"))
          .compose(y -> run(conn, statements, 0))
          .compose(y -> snapshot(conn))
          .map(again -> {
            // the locks of the first run were let go: what runs now must do what was counted
            if (!again.protectedDigest().equals(after.protectedDigest()) || !definitions(again).equals(definitions(after))) {
              throw new ToolException(ErrorCode.CONFLICT, "The schema changed while the migration was being planned; nothing was written."
                  + " Plan it again.", new JsonObject().put("argument", "statements"));
            }
            return lost;
          });
    }).map(counted -> {
      JsonArray shownTables = new JsonArray();
      tables.forEach(t -> {
        t.remove("sql");
        shownTables.add(t);
      });
      JsonArray shownLost = new JsonArray();
      counted.forEach(l -> {
        l.remove("sql");
        shownLost.add(l);
      });
      JsonObject fields = new JsonObject().put("tables", shownTables).put("lost", shownLost);
      // the plan holds for the schema it saw: the touched tables as they were, and what would be lost
      JsonArray seen = new JsonArray();
      for (JsonObject t : tables) {
        seen.add(new JsonObject().put("table", t.getString("table")).put("action", t.getString("action"))
            .put("before", t.getValue("before")));
      }
      return new Applied(-1, null, false, new Report(fields, !shownLost.isEmpty(), Canonical.hash(seen.encode() + shownLost.encode()),
          describe(tables, shownLost)));
    });
  }

  /** Counts the rows of each table of {@code actions}, into its {@code rows}. */
  private static Future<Void> rowsOf(SqlConnection conn, List<JsonObject> tables, String... actions) {
    Future<Void> chain = Future.succeededFuture();
    for (JsonObject t : tables) {
      if (List.of(actions).contains(t.getString("action"))) {
        // a dropped table is counted after going back to before the migration, under the name it had then
        String sql = t.getString("sql");
        chain = chain.compose(x -> conn.preparedQuery("SELECT count(*) FROM " + sql)
            .execute().map(rows -> {
              t.put("rows", rows.iterator().next().getLong(0));
              return null;
            }));
      }
    }
    return chain;
  }

  /** Counts what each entry of {@code lost} removes: every row of a dropped table, the rows with a value in a dropped column. */
  private static Future<Void> countLost(SqlConnection conn, List<JsonObject> lost, int from) {
    if (from == lost.size()) {
      return Future.succeededFuture();
    }
    JsonObject l = lost.get(from);
    String counted = l.containsKey("column") ? "count(" + SqlText.quoteIdent(l.getString("column")) + ")" : "count(*)";  // a table dropped or rewritten: every row
    return conn.preparedQuery("SELECT " + counted + " FROM " + l.getString("sql")).execute()
        .compose(rows -> {
          l.put("rows", rows.iterator().next().getLong(0));
          return countLost(conn, lost, from + 1);
        });
  }

  /** Every served table's name and definition, by oid. */
  private static Map<Long, String> definitions(Snapshot snapshot) {
    Map<Long, String> out = new LinkedHashMap<>();
    snapshot.tables().forEach((oid, t) -> out.put(oid, t.getString("table") + definition(t).encode()));
    return out;
  }

  private static JsonObject definition(JsonObject table) {
    JsonArray columns = new JsonArray();
    for (Object o : table.getJsonArray("columns")) {
      JsonObject c = ((JsonObject) o).copy();
      c.remove("attnum");
      if (c.getValue("default") == null) {
        c.remove("default");
      }
      columns.add(c);
    }
    return new JsonObject().put("columns", columns).put("indexes", table.getJsonArray("indexes"))
        .put("constraints", table.getJsonArray("constraints"));
  }

  private static String describe(List<JsonObject> tables, JsonArray lost) {
    List<String> parts = new ArrayList<>();
    for (String action : List.of("created", "altered", "dropped")) {
      List<String> names = tables.stream().filter(t -> action.equals(t.getString("action"))).map(t -> t.getString("table")).toList();
      if (!names.isEmpty()) {
        parts.add(switch (action) {
          case "created" -> "creates ";
          case "altered" -> "alters ";
          default -> "drops ";
        } + String.join(", ", names));
      }
    }
    String what = parts.isEmpty() ? "changes no served table" : String.join("; ", parts);
    return lost.isEmpty() ? what : what + "; it removes " + lost.size() + (lost.size() == 1 ? " table or column" : " tables or columns")
        + " for good (lost)";
  }

  private static ToolException outside(String what) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, "The migration changed " + what + ", which migrate does not do: it creates,"
        + " alters and drops served tables, their columns, indexes and constraints. Nothing was written.",
        new JsonObject().put("argument", "statements").put("reason", "outside_migration"));
  }
}
