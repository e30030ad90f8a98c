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
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code list_tables}: what the caller's role may read in the served schemas, or, with a
 * pattern, the tables, views, columns and functions whose name or comment contains it. Every
 * page stays within a token budget, measured on the structured content and on the text the
 * gateway renders from the rows, so that a large schema never floods a model's context.
 */
public final class ListTablesTool implements ReadTool {

  /** Tidemark's own schema is never served, whatever the configuration says. */
  public static final String OWN_SCHEMA = "tidemark";

  static final String KIND = "list_tables";
  static final int DEFAULT_TOKENS = 2_000;
  static final int MIN_TOKENS = 200;
  static final int MAX_TOKENS = 10_000;
  static final int MAX_PATTERN = 100;
  /** How much of a comment detail summary shows: enough to tell tables apart, not a page of prose each. */
  static final int SUMMARY_COMMENT = 200;
  /** What the gateway's text adds around the rows: a newline, BEGIN- and END- with an 8-character nonce each, and a newline. */
  private static final int FENCE_CHARS = 28;

  private static final Map<String, String> KINDS = Map.of(
      "r", "table", "v", "view", "m", "materialized_view", "p", "partitioned_table", "f", "foreign_table");

  private enum Detail { NAMES, SUMMARY, FULL }

  private static final String RELATIONS = "c.relkind IN ('r', 'v', 'm', 'p', 'f') AND NOT c.relispartition"
      + " AND n.nspname = ANY($1) AND n.nspname <> 'tidemark' AND has_table_privilege(c.oid, 'SELECT')";

  // runs on a connection that logged in as the caller's role, so the privilege functions answer for that role;
  // hits are ordered by (schema, object, part, sub) in the C collation, which the cursor resumes after
  private static final String SQL = """
      WITH hits AS (
        SELECT n.nspname::text AS schema, c.relname::text AS object, 0 AS part, ''::text AS sub,
               c.oid AS rel, 0::int2 AS attnum, 0::oid AS func
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE %1$s
           AND ($2::text IS NULL OR c.relname ILIKE $2 OR obj_description(c.oid, 'pg_class') ILIKE $2)
        UNION ALL
        SELECT n.nspname::text, c.relname::text, 1, lpad(a.attnum::text, 5, '0'), c.oid, a.attnum, 0::oid
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE $2::text IS NOT NULL AND a.attnum > 0 AND NOT a.attisdropped AND %1$s
           AND (a.attname ILIKE $2 OR col_description(c.oid, a.attnum) ILIKE $2)
        UNION ALL
        SELECT n.nspname::text, p.proname::text, 2, pg_get_function_identity_arguments(p.oid), 0::oid, 0::int2, p.oid
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE $2::text IS NOT NULL AND p.prokind IN ('f', 'p')
           AND n.nspname = ANY($1) AND n.nspname <> 'tidemark'
           AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype)
           AND NOT EXISTS (SELECT 1 FROM pg_depend d
                            WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
           AND has_function_privilege(p.oid, 'EXECUTE')
           AND (p.proname ILIKE $2 OR obj_description(p.oid, 'pg_proc') ILIKE $2)
      ), page AS (
        SELECT * FROM hits
         WHERE $3::text IS NULL
            OR (schema COLLATE "C", object COLLATE "C", part, sub COLLATE "C")
               > ($3::text COLLATE "C", $4::text COLLATE "C", $5::int, $6::text COLLATE "C")
         ORDER BY schema COLLATE "C", object COLLATE "C", part, sub COLLATE "C"
         LIMIT $7
      )
      SELECT h.schema, h.object, h.part, h.sub,
             CASE WHEN h.part = 2 THEN p.prokind::text ELSE c.relkind::text END AS kind,
             CASE WHEN h.part = 0 AND c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated_rows,
             CASE h.part WHEN 0 THEN obj_description(h.rel, 'pg_class') WHEN 1 THEN col_description(h.rel, h.attnum)
                         ELSE obj_description(h.func, 'pg_proc') END AS comment,
             CASE WHEN h.part = 0 THEN
               COALESCE((SELECT array_agg(ka.attname::text ORDER BY k.ord)
                           FROM pg_index i
                           CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                           JOIN pg_attribute ka ON ka.attrelid = i.indrelid AND ka.attnum = k.attnum
                          WHERE i.indrelid = h.rel AND i.indisprimary), '{}') END AS primary_key,
             a.attname::text AS column_name, format_type(a.atttypid, a.atttypmod) AS column_type,
             a.attnotnull AS not_null, pg_get_expr(ad.adbin, ad.adrelid) AS column_default,
             CASE WHEN h.part = 2 THEN pg_get_function_result(h.func) END AS returns
        FROM page h
        LEFT JOIN pg_class c ON c.oid = h.rel
        LEFT JOIN pg_proc p ON p.oid = h.func
        LEFT JOIN pg_attribute a ON h.part = 1 AND a.attrelid = h.rel AND a.attnum = h.attnum
        LEFT JOIN pg_attrdef ad ON h.part = 1 AND ad.adrelid = h.rel AND ad.adnum = h.attnum
       ORDER BY h.schema COLLATE "C", h.object COLLATE "C", h.part, h.sub COLLATE "C"
      """.formatted(RELATIONS);

  private final DatabaseConfig database;
  private final CursorCodec cursors;

  public ListTablesTool(DatabaseConfig database, CursorCodec cursors) {
    this.database = database;
    this.cursors = cursors;
  }

  /** What one call asks for, checked before anything is read. */
  private record Ask(List<String> schemas, String pattern, Detail detail, int maxTokens, JsonArray after, String shape) {}

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    Ask ask;
    try {
      ask = ask(request);
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    String like = ask.pattern() == null ? null : like(ask.pattern());
    JsonArray after = ask.after();
    // every item costs at least a token in each form, so a budget's worth of hits and one more tells whether more follow
    Tuple params = Tuple.of(ask.schemas().toArray(new String[0]), like,
        after == null ? null : after.getString(0), after == null ? null : after.getString(1),
        after == null ? null : after.getInteger(2), after == null ? null : after.getString(3))
        .addInteger(ask.maxTokens() + 1);
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> conn.preparedQuery(SQL).execute(params))
        .map(rows -> page(ask, request.caller().id(), hits(rows)));
  }

  private Ask ask(ToolRequest request) {
    JsonObject args = request.arguments();
    List<String> schemas = database.schemas();
    String only = args.getValue("schema") instanceof String s ? s : null;
    if (only != null) {
      if (!schemas.contains(only) || OWN_SCHEMA.equals(only)) {
        throw new ToolException(ErrorCode.NOT_FOUND,
            "Schema '" + only + "' is not served here. Served schemas: " + String.join(", ", schemas) + ".",
            new JsonObject().put("argument", "schema"));
      }
      schemas = List.of(only);
    }
    String pattern = pattern(args.getValue("pattern"));
    Detail detail = detail(args.getValue("detail"));
    int maxTokens = maxTokens(args.getValue("max_tokens"));
    String shape = CursorCodec.fingerprint(new JsonArray().add(only).add(pattern).encode());
    JsonArray after = null;
    if (args.getValue("cursor") != null) {
      if (!(args.getValue("cursor") instanceof String cursor)) {
        throw CursorCodec.invalid();
      }
      JsonObject payload = cursors.decode(cursor, KIND, request.caller().id());
      if (!shape.equals(payload.getString("f"))) {
        throw new ToolException(ErrorCode.INVALID_CURSOR,
            "The cursor belongs to another schema or pattern; send the same ones, or start again without a cursor.",
            new JsonObject().put("argument", "cursor"));
      }
      after = payload.getJsonArray("a");
    }
    return new Ask(schemas, pattern, detail, maxTokens, after, shape);
  }

  private static String pattern(Object raw) {
    if (raw == null) {
      return null;
    }
    if (!(raw instanceof String pattern) || pattern.isBlank() || pattern.length() > MAX_PATTERN
        || pattern.chars().anyMatch(Character::isISOControl)) {
      throw invalid("pattern", "pattern must be 1 to " + MAX_PATTERN + " characters of text, not blank and without control"
          + " characters; * matches any text, as in pattern: \"*email*\" or pattern: \"email\".");
    }
    return pattern;
  }

  private static Detail detail(Object raw) {
    if (raw == null) {
      return Detail.SUMMARY;
    }
    for (Detail d : Detail.values()) {
      if (d.name().toLowerCase().equals(raw)) {
        return d;
      }
    }
    throw invalid("detail", "detail must be names, summary or full.");
  }

  private static int maxTokens(Object raw) {
    if (raw == null) {
      return DEFAULT_TOKENS;
    }
    if (raw instanceof Integer || raw instanceof Long) {
      long n = ((Number) raw).longValue();
      if (n >= MIN_TOKENS && n <= MAX_TOKENS) {
        return (int) n;
      }
    }
    throw invalid("max_tokens", "max_tokens must be a whole number from " + MIN_TOKENS + " to " + MAX_TOKENS + ".");
  }

  private static ToolException invalid(String argument, String message) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, message + " " + ErrorCode.INVALID_ARGUMENTS.hint(),
        new JsonObject().put("argument", argument));
  }

  /** The pattern as an ILIKE operand: contained anywhere, * as any text, every other character itself. */
  static String like(String pattern) {
    StringBuilder like = new StringBuilder("%");
    for (char ch : pattern.toCharArray()) {
      switch (ch) {
        case '*' -> like.append('%');
        case '%', '_', '\\' -> like.append('\\').append(ch);
        default -> like.append(ch);
      }
    }
    return like.append('%').toString();
  }

  /** One thing found: a relation (part 0), a column (1) or a function (2). */
  private record Hit(String schema, String object, int part, String sub, Row row) {

    JsonArray key() {
      return new JsonArray().add(schema).add(object).add(part).add(sub);
    }
  }

  private static List<Hit> hits(RowSet<Row> rows) {
    List<Hit> hits = new ArrayList<>(rows.size());
    for (Row r : rows) {
      hits.add(new Hit(r.getString("schema"), r.getString("object"), r.getInteger("part"), r.getString("sub"), r));
    }
    return hits;
  }

  /**
   * The longest page within the budget: all the hits when they fit without a cursor, else the
   * most that fit beside one. Sizes grow with the hits taken, so a binary search finds it.
   */
  private ToolReply page(Ask ask, String callerId, List<Hit> hits) {
    boolean more = hits.size() > ask.maxTokens();
    List<Hit> found = more ? hits.subList(0, ask.maxTokens()) : hits;
    if (!more) {
      ToolReply all = build(ask, callerId, found, found.size(), false);
      if (fits(all, ask.maxTokens())) {
        return all;
      }
    }
    int low = 1;
    int high = more ? found.size() : found.size() - 1;
    ToolReply best = null;
    while (low <= high) {
      int mid = (low + high) >>> 1;
      ToolReply candidate = build(ask, callerId, found, mid, true);
      if (fits(candidate, ask.maxTokens())) {
        best = candidate;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    if (best == null) {
      Hit first = found.get(0);
      throw new ToolException(ErrorCode.LIMIT_EXCEEDED,
          "The next match (" + first.schema() + "." + first.object() + ") alone takes more than max_tokens " + ask.maxTokens()
              + "; raise max_tokens" + (ask.detail() == Detail.FULL ? ", or ask for detail summary, which cuts comments." : "."),
          new JsonObject().put("argument", "max_tokens"));
    }
    return best;
  }

  /** Whether both forms a model may read, the structured content and the text, stay within {@code maxTokens}. */
  static boolean fits(ToolReply reply, int maxTokens) {
    long chars = (long) maxTokens * 4;
    return reply.structured().encode().length() <= chars && textLength(reply.summary(), reply.rows()) <= chars;
  }

  /**
   * The length of the text content the gateway renders from a reply: the summary, then the rows
   * fenced, as a line of the column names and a line of values per row.
   */
  static int textLength(String summary, JsonArray rows) {
    if (rows.isEmpty()) {
      return summary.length();
    }
    Set<String> names = new LinkedHashSet<>();
    rows.forEach(r -> names.addAll(((JsonObject) r).fieldNames()));
    int length = summary.length() + FENCE_CHARS + Json.encode(new ArrayList<>(names)).length() + 1;
    for (Object r : rows) {
      JsonArray values = new JsonArray();
      names.forEach(n -> values.add(((JsonObject) r).getValue(n)));
      length += values.encode().length() + 1;
    }
    return length;
  }

  private ToolReply build(Ask ask, String callerId, List<Hit> found, int count, boolean withCursor) {
    JsonArray tables = new JsonArray();
    JsonArray functions = new JsonArray();
    JsonArray rows = new JsonArray();
    JsonObject lastTable = null;
    for (Hit hit : found.subList(0, count)) {
      Row r = hit.row();
      switch (hit.part()) {
        case 0 -> {
          lastTable = table(hit, ask.detail(), true);
          tables.add(lastTable);
          rows.add(lastTable.copy());
        }
        case 1 -> {
          if (lastTable == null || !lastTable.getString("schema").equals(hit.schema())
              || !lastTable.getString("name").equals(hit.object())) {
            lastTable = table(hit, ask.detail(), false);
            tables.add(lastTable);
          }
          JsonObject column = column(r, ask.detail());
          JsonArray columns = lastTable.getJsonArray("columns");
          if (columns == null) {
            lastTable.put("columns", columns = new JsonArray());
          }
          columns.add(column);
          // the text names a column as table.column, so that its line stands on its own
          JsonObject row = new JsonObject().put("schema", hit.schema()).put("name", hit.object() + "." + column.getString("name"))
              .put("kind", "column");
          column.forEach(e -> row.put(e.getKey(), e.getKey().equals("name") ? row.getValue("name") : e.getValue()));
          rows.add(row);
        }
        default -> {
          JsonObject function = function(hit, ask.detail());
          functions.add(function);
          rows.add(function.copy());
        }
      }
    }
    JsonObject structured = new JsonObject().put("tables", tables);
    if (ask.pattern() != null) {
      structured.put("functions", functions);
    }
    String next = null;
    if (withCursor) {
      JsonObject payload = new JsonObject().put("k", KIND).put("f", ask.shape()).put("a", found.get(count - 1).key())
          .put("iat", System.currentTimeMillis());
      next = cursors.encode(payload, callerId);
      structured.put("next_cursor", next);
    }
    return ToolReply.ok(summary(ask, count, next), structured, rows);
  }

  /** The summary line; it carries {@code next} itself, since a host may show the model only the text. */
  private static String summary(Ask ask, int count, String next) {
    String where = String.join(", ", ask.schemas());
    String found = ask.pattern() == null
        ? count + (count == 1 ? " table or view" : " tables and views") + " readable in " + where
        : count + (count == 1 ? " match" : " matches") + " for '" + ask.pattern() + "' in " + where;
    return "list_tables: " + found + (next != null ? "; more follow: pass cursor " + next : "");
  }

  /** A relation, with what {@code detail} shows of it; one shown only for its columns ({@code hit} false) carries its name and kind alone. */
  private static JsonObject table(Hit hit, Detail detail, boolean matched) {
    JsonObject t = new JsonObject().put("schema", hit.schema()).put("name", hit.object())
        .put("kind", KINDS.get(hit.row().getString("kind")));
    if (!matched || detail == Detail.NAMES) {
      return t;
    }
    Row r = hit.row();
    Long estimate = r.getLong("estimated_rows");
    if (estimate != null) {
      t.put("estimated_rows", estimate);
    }
    t.put("primary_key", new JsonArray(List.of(r.getArrayOfStrings("primary_key"))));
    return putComment(t, r, detail);
  }

  private static JsonObject column(Row r, Detail detail) {
    JsonObject c = new JsonObject().put("name", r.getString("column_name"));
    if (detail == Detail.NAMES) {
      return c;
    }
    c.put("type", r.getString("column_type"));
    if (detail == Detail.FULL) {
      c.put("nullable", !r.getBoolean("not_null"));
      String fallback = r.getString("column_default");
      if (fallback != null) {
        c.put("default", fallback);
      }
    }
    return putComment(c, r, detail);
  }

  private static JsonObject function(Hit hit, Detail detail) {
    Row r = hit.row();
    JsonObject f = new JsonObject().put("schema", hit.schema()).put("name", hit.object())
        .put("kind", "p".equals(r.getString("kind")) ? "procedure" : "function").put("arguments", hit.sub());
    if (detail == Detail.NAMES) {
      return f;
    }
    String returns = r.getString("returns");
    if (returns != null) {
      f.put("returns", returns);
    }
    return putComment(f, r, detail);
  }

  private static JsonObject putComment(JsonObject into, Row r, Detail detail) {
    String comment = r.getString("comment");
    if (comment != null) {
      into.put("comment", detail == Detail.SUMMARY && comment.length() > SUMMARY_COMMENT
          ? comment.substring(0, SUMMARY_COMMENT - 1) + "…" : comment);
    }
    return into;
  }
}
