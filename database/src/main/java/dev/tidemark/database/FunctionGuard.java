package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Refuses, before a caller's statement runs, every function it calls that PostgreSQL's catalog
 * marks {@code VOLATILE} (one that may change state: take a lock, change a setting, notify,
 * signal a backend), except a short allowlist, and every function that runs SQL of its own (whose
 * SQL no plan shows). The names come from the statement's plan as PostgreSQL deparses it
 * ({@code EXPLAIN VERBOSE}: every expression, view and policy expanded), and what each name is
 * comes from {@code pg_proc}, never from the statement's text. A name matches every function of
 * that name in any schema, so an overload or a look-alike in another schema can only make the
 * check refuse more. See docs/security.md for what remains (a function someone with CREATE
 * rights marked STABLE may still do what it likes).
 */
public final class FunctionGuard {

  /** Volatile functions a caller's statement may call: they change nothing that outlives it. */
  static final Set<String> ALLOWED_VOLATILE = Set.of("random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid",
      "uuidv4", "uuidv7", "pg_sleep", "pg_sleep_for", "pg_sleep_until", "nextval", "currval", "lastval",
      // what the system views pg_locks, pg_prepared_statements, pg_cursors, pg_prepared_xacts, pg_settings,
      // pg_stat_activity and pg_replication_slots read: they only look
      "pg_lock_status", "pg_blocking_pids", "pg_safe_snapshot_blocking_pids", "pg_prepared_statement", "pg_cursor",
      "pg_prepared_xact", "pg_show_all_settings", "pg_stat_get_activity", "pg_get_replication_slots");

  /** The uuid-ossp extension's generators, in whatever schema it was installed. */
  static final Set<String> ALLOWED_ANYWHERE = Set.of("uuid_generate_v1", "uuid_generate_v1mc", "uuid_generate_v4");

  /** Functions that run SQL they are given, whatever their volatility: the plan never shows that SQL. */
  static final Set<String> RUNS_SQL = Set.of("query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
      "cursor_to_xml", "cursor_to_xmlschema", "table_to_xml", "table_to_xmlschema", "table_to_xml_and_xmlschema",
      "schema_to_xml", "schema_to_xmlschema", "schema_to_xml_and_xmlschema", "database_to_xml", "database_to_xmlschema",
      "database_to_xml_and_xmlschema", "ts_stat", "ts_rewrite", "dblink", "dblink_exec", "dblink_open", "dblink_fetch",
      "dblink_send_query", "dblink_get_result", "dblink_connect", "dblink_connect_u");

  private static final String LOOKUP = """
      SELECT DISTINCT p.proname::text FROM pg_proc p
       WHERE p.proname = ANY($1::text[]) AND (p.provolatile = 'v' OR p.proname = ANY($2::text[]))
         AND NOT ((p.proname = ANY($3::text[]) AND p.pronamespace = 'pg_catalog'::regnamespace) OR p.proname = ANY($4::text[]))""";

  /** Names found harmless, and when: a function created or altered since counts after this long at most. */
  static final long HARMLESS_TTL_MS = 5_000;
  private static final Map<String, Long> HARMLESS = new ConcurrentHashMap<>();

  private FunctionGuard() {}

  /**
   * Completes when no function {@code plan} calls is refused; otherwise fails with {@code code},
   * naming the functions (their names came from the caller's statement, and the catalog said
   * what they are) and what the caller can do.
   */
  public static Future<Void> check(SqlConnection conn, JsonObject plan, ErrorCode code, String argument) {
    Set<String> names = new TreeSet<>();
    collect(plan, names);
    long now = System.currentTimeMillis();
    List<String> unknown = new ArrayList<>();
    for (String name : names) {
      Long at = HARMLESS.get(name);
      if (at == null || now - at > HARMLESS_TTL_MS) {
        unknown.add(name);
      }
    }
    if (unknown.isEmpty()) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(LOOKUP).execute(Tuple.of(unknown.toArray(new String[0]), RUNS_SQL.toArray(new String[0]),
            ALLOWED_VOLATILE.toArray(new String[0]), ALLOWED_ANYWHERE.toArray(new String[0])))
        .compose(rows -> {
          Set<String> refused = new TreeSet<>();
          for (Row r : rows) {
            refused.add(r.getString(0));
          }
          for (String name : unknown) {
            if (!refused.contains(name)) {
              HARMLESS.put(name, now);
            }
          }
          if (refused.isEmpty()) {
            return Future.succeededFuture();
          }
          return Future.failedFuture(new ToolException(code, "The statement calls " + String.join(", ", refused) + ", which may change"
              + " state beyond the statement (a lock, a setting, a notification, another session) or runs SQL of its own; statements"
              + " sent to Tidemark may call only functions that change nothing, and of the volatile ones only "
              + String.join(", ", new TreeSet<>(ALLOWED_VOLATILE)) + ". Rewrite the statement without "
              + (refused.size() == 1 ? "it" : "them") + ". Nothing was run.",
              new JsonObject().put("argument", argument).put("functions", new JsonArray(List.copyOf(refused)))));
        });
  }

  /** Every name the plan's expressions call, depth first through sub-plans. */
  static void collect(Object node, Set<String> names) {
    if (node instanceof JsonObject o) {
      for (Map.Entry<String, Object> e : o) {
        collect(e.getValue(), names);
      }
    } else if (node instanceof JsonArray a) {
      for (Object v : a) {
        collect(v, names);
      }
    } else if (node instanceof String s) {
      calledNames(s, names);
    }
  }

  /**
   * The names of the functions called in one expression as PostgreSQL deparses it: an
   * identifier, perhaps schema-qualified, perhaps double-quoted, followed by an opening
   * parenthesis, outside string literals. Unquoted names are lower case in PostgreSQL's output.
   */
  static void calledNames(String expr, Set<String> names) {
    int n = expr.length();
    int i = 0;
    String last = null;
    while (i < n) {
      char c = expr.charAt(i);
      if (c == '\'') {
        i = skipQuoted(expr, i, '\'');
        last = null;
      } else if (c == '"') {
        int end = skipQuoted(expr, i, '"');
        last = expr.substring(i + 1, end - 1).replace("\"\"", "\"");
        i = end;
      } else if (Character.isLetter(c) || c == '_') {
        int start = i;
        while (i < n && (Character.isLetterOrDigit(expr.charAt(i)) || expr.charAt(i) == '_' || expr.charAt(i) == '$')) {
          i++;
        }
        last = expr.substring(start, i).toLowerCase(java.util.Locale.ROOT);
      } else if (c == '.' && last != null) {
        i++;  // schema.name: the name that follows is the one called
      } else if (c == '(') {
        if (last != null) {
          names.add(last);
        }
        last = null;
        i++;
      } else if (Character.isWhitespace(c)) {
        i++;
      } else {
        last = null;
        i++;
      }
    }
  }

  /** The index just past the literal or identifier opened by {@code quote} at {@code start}; a doubled quote stays inside. */
  private static int skipQuoted(String s, int start, char quote) {
    int i = start + 1;
    while (i < s.length()) {
      if (s.charAt(i) == quote) {
        if (i + 1 < s.length() && s.charAt(i + 1) == quote) {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return s.length();
  }
}
