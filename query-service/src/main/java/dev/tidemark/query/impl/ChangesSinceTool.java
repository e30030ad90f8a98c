package dev.tidemark.query.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.SqlText;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ChangeCause;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.RowImages;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import io.vertx.sqlclient.RowSet;
import java.util.ArrayList;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Set;

/**
 * {@code changes_since}: committed changes after a cursor, in position (commit) order, to the
 * tables the caller's role may SELECT (all columns or some). It reads the changelog as the login, in one REPEATABLE
 * READ snapshot of the database it is stored in (database.changelog-url, or the served one), so the page and the
 * next cursor agree; the caller's rights are checked on the served database with has_any_column_privilege for the
 * caller's role. On a table whose row-level security applies to
 * the role, a change is shown only when its row is one the role may read now (see visible()). Images and keys hold
 * only the columns the role may SELECT (a key with a column it may not read is left out), and
 * who made a change comes from {@code tidemark.change_attribution}, which only Tidemark writes.
 */
public final class ChangesSinceTool implements ReadTool {

  static final int DEFAULT_LIMIT = 100;

  /**
   * The page in the changelog's database: changes after a position ($1, $2) to the tables of $3
   * (those the caller may read), with who made each and why as the changelog's attribution says.
   */
  private static final String STORED_PAGE = """
      SELECT k.position, c.id, k.committed_at, c.xid::text AS xid, c.relid::int8 AS relid, c.schema_name, c.table_name, c.op,
             c.key::text AS key, c.before::text AS before, c.after::text AS after, coalesce(a.caller, c.caller) AS caller, coalesce(a.tool, c.tool) AS tool,
             a.idempotency_key AS cause_key, a.plan_id AS plan_of
        FROM tidemark.changelog_commit k
        JOIN tidemark.changelog c ON c.xid = k.xid
        LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid
       WHERE k.position >= $1 AND (k.position > $1 OR c.id > $2)
         AND c.op <> 'DDL'
         AND c.relid = ANY($3::int8[]::oid[])
       ORDER BY k.position, c.id
       LIMIT $4""";

  /** The tables of the served schemas ($3) the caller's role ($1) may read some column of, of those asked for ($2, null: all). */
  private static final String READABLE = """
      SELECT coalesce(array_agg(c.oid::int8), '{}')
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = ANY($3) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
         AND ($2::text[] IS NULL OR n.nspname || '.' || c.relname = ANY($2) OR c.relname = ANY($2))
         AND has_any_column_privilege($1, c.oid, 'SELECT')""";

  /** The changelog's attribution of transactions $1, for the events' records. */
  private static final String ATTRIBUTIONS =
      "SELECT xid::text AS xid, idempotency_key, plan_id FROM tidemark.change_attribution WHERE xid = ANY($1::text[]::xid8[])";

  /**
   * Changes given as records (a JSON array as text, $7, so that no value passes through a Java number) as the caller's role ($3) may see them, by the
   * served database's catalogs: a page read from the changelog's database, or records of the topic
   * ({@code ChangelogRecord.toJson}) for the events tools. A record of the changelog names its
   * table by oid; one of the topic by its name, so that one of a table dropped or renamed since is
   * not shown.
   */
  private static final String RECORDS = page("""
      (WITH r AS (
         SELECT r.*, (r.position_json->>'commit')::bigint AS position, (r.position_json->>'change')::bigint AS id
           FROM jsonb_to_recordset($7::text::jsonb) AS r(position_json jsonb, committed_at timestamptz, xid xid8, given_relid int8, schema_name text,
                table_name text, op text, key jsonb, before jsonb, after jsonb, caller text, tool text, cause_key text, plan_of text)),
       -- each table's name looked up once, not once per record
       named AS (SELECT DISTINCT ON (schema_name, table_name) schema_name, table_name,
                        to_regclass(format('%I.%I', schema_name, table_name))::oid AS relid FROM r WHERE r.given_relid IS NULL)
       SELECT r.*, coalesce(r.given_relid::oid, named.relid) AS relid FROM r LEFT JOIN named USING (schema_name, table_name)) c
        CROSS JOIN LATERAL (SELECT c.position, c.committed_at) k""");

  /**
   * The page's statement over {@code source}, which names a change {@code c} and its commit {@code k}.
   * Images and the key come as text too (the key as an image of its columns), for {@link RowImages}
   * to map as reads do, in the table's current name ({@code relation}).
   * The caller's readable columns are looked up once per table of the page ({@code readable}), not
   * once per value: a page of 100 changes of one table costs one catalog scan, not hundreds.
   */
  private static String page(String source) {
    return """
      WITH page AS (
        SELECT k.position, c.id, k.committed_at, c.xid, c.relid, c.schema_name, c.table_name, c.op, c.key, c.before, c.after,
               c.caller, c.tool, c.cause_key, c.plan_of
          FROM %s
         WHERE k.position >= $1 AND (k.position > $1 OR c.id > $2)
           AND c.op <> 'DDL'
           AND c.schema_name = ANY($5)
           AND has_any_column_privilege($3, c.relid, 'SELECT')
           AND ($4::text[] IS NULL OR c.schema_name || '.' || c.table_name = ANY($4) OR c.table_name = ANY($4))
         ORDER BY k.position, c.id
         LIMIT $6),
      readable AS (
        SELECT a.attrelid AS relid, array_agg(a.attname::text) AS cols
          FROM pg_attribute a
         WHERE a.attrelid IN (SELECT DISTINCT relid FROM page) AND a.attnum > 0 AND NOT a.attisdropped
           AND has_column_privilege($3, a.attrelid, a.attnum, 'SELECT')
         GROUP BY a.attrelid)
      SELECT p.*, p.before::text AS before_text, p.after::text AS after_text,
             CASE WHEN jsonb_typeof(p.key) = 'object' THEN p.key::text
                  WHEN jsonb_typeof(p.key) = 'array' AND jsonb_array_length(p.key) = cardinality(p.key_columns)
                       AND cardinality(p.key_columns) > 0
                  THEN (SELECT jsonb_object_agg(u.col, p.key -> (u.n - 1)::int) FROM unnest(p.key_columns) WITH ORDINALITY u(col, n))::text
             END AS key_text
        FROM (
      SELECT c.position, c.id, c.committed_at, c.xid::text AS xid, c.schema_name, c.table_name, c.op,
             CASE WHEN t.relid IS NULL THEN NULL
                  -- a row as key (the table had no primary key then) shows only the columns the role may read
                  WHEN jsonb_typeof(c.key) = 'object'
                  THEN (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(c.key) e WHERE e.key = ANY(r.cols))
                  -- key values of a table that has no primary key now cannot be named
                  WHEN t.key_columns = '{}' THEN NULL
                  WHEN t.key_columns <@ r.cols THEN c.key END AS key,
             (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(c.before) e WHERE e.key = ANY(r.cols)) AS before,
             (SELECT jsonb_object_agg(e.key, e.value) FROM jsonb_each(c.after) e WHERE e.key = ANY(r.cols)) AS after,
             c.caller, c.tool, c.cause_key, c.plan_of,
             cls.relrowsecurity AND NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $3 AND (rolbypassrls OR rolsuper))
               AS row_security,
             t.key_columns, format('%%I.%%I', ns.nspname, cls.relname) AS relation,
             CASE WHEN cls.relrowsecurity THEN c.after::text END AS rls_after
        FROM page c
        JOIN pg_class cls ON cls.oid = c.relid
        JOIN pg_namespace ns ON ns.oid = cls.relnamespace
        LEFT JOIN readable r ON r.relid = c.relid
        LEFT JOIN tidemark.captured_table t ON t.relid = c.relid) p
       ORDER BY p.position, p.id""".formatted(source);
  }

  private final DatabaseConfig database;

  private final Pool pool;
  private final Pool store;
  private final PlainChanges plain;

  /**
   * @param pool Tidemark's login on the served database: callers have no rights on schema tidemark
   * @param store Tidemark's login on the database the changelog is stored in ({@code pool} itself unless database.changelog-url is set)
   */
  public ChangesSinceTool(DatabaseConfig database, Pool pool, Pool store) {
    this.pool = pool;
    this.store = store;
    this.plain = new PlainChanges(pool);
    this.database = database;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    int limit = args.getInteger("limit", DEFAULT_LIMIT);
    JsonArray tables = args.getJsonArray("tables");
    String[] wanted = tables == null ? null : tables.stream().map(String::valueOf).toArray(String[]::new);
    String[] schemas = database.schemas().stream().filter(s -> !ListTablesTool.OWN_SCHEMA.equals(s)).toArray(String[]::new);
    String given = args.getString("cursor");
    KeyRing key;
    try {
      key = db.keys().ring();
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    // the tables asked for that the role may read, from the served database's catalogs; the page
    // of their changes from the changelog's database, in one snapshot there so that the page and the
    // next cursor agree; then the page shown as the role may see it, by the served database again
    return pool.preparedQuery(READABLE).execute(Tuple.of(request.caller().pgRole(), wanted, schemas))
        .map(rows -> rows.iterator().next().getArrayOfLongs(0))
        .compose(readable -> store.withTransaction(conn ->
            conn.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = "
                    + database.statementTimeoutMs()).execute()
                .compose(x -> Changelog.bounds(conn))
                .compose(bounds -> {
                  ChangePosition from = given == null ? bounds.pruned() : decode(given, key);
                  if (from.compareTo(bounds.pruned()) < 0) {
                    return Future.failedFuture(new ToolException(ErrorCode.CURSOR_EXPIRED,
                        "The cursor is older than the changes Tidemark keeps; changes after it were removed. "
                            + "Start again from the changelog_head that status reports, and re-read what you need.",
                        new JsonObject().put("argument", "cursor")));
                  }
                  return conn.preparedQuery(STORED_PAGE).execute(Tuple.of(from.commit(), from.change(), readable, limit + 1))
                      .map(rows -> new Fetched(rows, bounds, from));
                })))
        // the login's connections go back before the caller's role reads anything: a caller that fills
        // its own pool must not hold connections of the login, which every caller's token check needs
        .compose(fetched -> {
          List<Row> page = new ArrayList<>();
          fetched.rows().forEach(page::add);
          boolean more = page.size() > limit;
          if (more) {
            page = page.subList(0, limit);
          }
          List<String> records = new ArrayList<>();
          page.forEach(r -> records.add(record(r)));
          List<Row> fetchedPage = page;
          return rendered(db, request, "[" + String.join(",", records) + "]", records.size(), schemas).compose(rendered -> {
            List<Row> shown = new ArrayList<>();
            List<String> positions = new ArrayList<>();
            for (Row r : rendered.rows()) {
              if (!Boolean.TRUE.equals(r.getBoolean("row_security")) || rendered.visible().contains(r.getLong("id"))) {
                shown.add(r);
                positions.add(ChangeCursor.encode(new ChangePosition(r.getLong("position"), r.getLong("id")), key));
              }
            }
            // past every change of the page, shown or not (a table dropped since, a row the role may not see)
            ChangePosition last = fetchedPage.isEmpty() ? fetched.from()
                : new ChangePosition(fetchedPage.get(fetchedPage.size() - 1).getLong("position"),
                    fetchedPage.get(fetchedPage.size() - 1).getLong("id"));
            Changelog.Bounds bounds = fetched.bounds();
            // nothing more to show: continue from the head, past changes the caller may not see
            ChangePosition next = more || !bounds.head().isAfter(last) ? last : bounds.head();
            return images(db, request, shown).map(images -> {
              JsonArray changes = new JsonArray();
              for (int i = 0; i < shown.size(); i++) {
                changes.add(change(shown.get(i), positions.get(i), images.get(i)));
              }
              JsonObject out = new JsonObject().put("changes", changes).put("next_cursor", ChangeCursor.encode(next, key))
                  .put("has_more", more);
              String summary = "changes_since: " + changes.size() + (changes.size() == 1 ? " change" : " changes")
                  + (more ? ", more waiting" : ", up to date") + "; next_cursor " + out.getString("next_cursor");
              return ToolReply.ok(summary, out, changes);
            });
          });
        });
  }

  /**
   * A change of the changelog's page as a record of {@link #RECORDS}, its cause as the changelog's
   * attribution gives it. The key and images go in as the text PostgreSQL wrote, never through a
   * Java number: a numeric of 20 digits would come back as a double.
   */
  private static String record(Row r) {
    String fields = new JsonObject()
        .put("position_json", new JsonObject().put("commit", r.getLong("position")).put("change", r.getLong("id")))
        .put("committed_at", r.getOffsetDateTime("committed_at").toString()).put("xid", r.getString("xid"))
        .put("given_relid", r.getLong("relid")).put("schema_name", r.getString("schema_name")).put("table_name", r.getString("table_name"))
        .put("op", r.getString("op")).put("caller", r.getString("caller")).put("tool", r.getString("tool"))
        .put("cause_key", r.getString("cause_key")).put("plan_of", r.getString("plan_of")).encode();
    StringBuilder out = new StringBuilder(fields.length() + 256).append(fields, 0, fields.length() - 1);
    for (String image : List.of("key", "before", "after")) {
      out.append(",\"").append(image).append("\":").append(r.getString(image) == null ? "null" : r.getString(image));
    }
    return out.append('}').toString();
  }

  /**
   * The changes of {@code records} (changelog records as the topic holds them) as changes_since
   * would show them to the caller, by change id; a change the caller may not see (a table or a
   * row it may not read, or a table gone) is absent.
   */
  public Future<Map<Long, JsonObject>> show(CallerDb db, ToolRequest request, JsonArray records) {
    String[] schemas = database.schemas().stream().filter(s -> !ListTablesTool.OWN_SCHEMA.equals(s)).toArray(String[]::new);
    // most leases are of plain tables, shown from the records with one catalog statement; the rest
    // (row security, types PostgreSQL maps) by the statements below
    return plain.show(request.caller().pgRole(), Set.copyOf(List.of(schemas)), records)
        .compose(shown -> shown != null ? Future.succeededFuture(shown) : showByStatements(db, request, records, schemas));
  }

  private Future<Map<Long, JsonObject>> showByStatements(CallerDb db, ToolRequest request, JsonArray records, String[] schemas) {
    List<String> xids = new ArrayList<>();
    records.forEach(o -> xids.add(((JsonObject) o).getString("transaction")));
    // a change's cause (an event's reaction, a proposal) as the changelog's attribution gives it:
    // the record's copy may be of a pruned or an unsigned attribution
    return store.preparedQuery(ATTRIBUTIONS).execute(Tuple.of(xids.toArray(String[]::new))).compose(attributed -> {
      Map<String, Row> causes = new HashMap<>();
      attributed.forEach(a -> causes.put(a.getString("xid"), a));
      JsonArray rows = new JsonArray();
      Map<Long, String> cursors = new HashMap<>();
      for (Object o : records) {
        JsonObject r = (JsonObject) o;
        Row cause = causes.get(r.getString("transaction"));
        rows.add(new JsonObject().put("position_json", r.getJsonObject("position")).put("committed_at", r.getString("committed_at"))
            .put("xid", r.getString("transaction")).put("schema_name", r.getString("schema")).put("table_name", r.getString("table"))
            .put("op", r.getString("op")).put("key", r.getValue("key")).put("before", r.getValue("before"))
            .put("after", r.getValue("after")).put("caller", r.getString("caller")).put("tool", r.getString("tool"))
            .put("cause_key", cause == null ? null : cause.getString("idempotency_key"))
            .put("plan_of", cause == null ? null : cause.getString("plan_id")));
        cursors.put(r.getJsonObject("position").getLong("change"), r.getString("cursor"));
      }
      return rendered(db, request, rows.encode(), rows.size(), schemas).compose(rendered -> {
        List<Row> shown = new ArrayList<>();
        for (Row r : rendered.rows()) {
          if (!Boolean.TRUE.equals(r.getBoolean("row_security")) || rendered.visible().contains(r.getLong("id"))) {
            shown.add(r);
          }
        }
        return images(db, request, shown).map(images -> {
          Map<Long, JsonObject> out = new HashMap<>();
          for (int i = 0; i < shown.size(); i++) {
            long id = shown.get(i).getLong("id");
            out.put(id, change(shown.get(i), cursors.get(id), images.get(i)));
          }
          return out;
        });
      });
    });
  }

  /** The rows of {@link #RECORDS} for {@code records}, and of those under row-level security the ids the caller may see. */
  private record Rendered(List<Row> rows, Set<Long> visible) {}

  private Future<Rendered> rendered(CallerDb db, ToolRequest request, String records, int count, String[] schemas) {
    if (count == 0) {
      return Future.succeededFuture(new Rendered(List.of(), Set.of()));
    }
    // one statement of Tidemark's own over the records given, which reads only catalogs and
    // schema tidemark: no transaction of its own (BEGIN, SET, COMMIT were a fifth of a lease's rendering)
    return pool.preparedQuery(RECORDS).execute(Tuple.from(java.util.Arrays.asList(0L, 0L, request.caller().pgRole(),
            null, schemas, count + 1, records)))
        .compose(rows -> {
          List<Row> list = new ArrayList<>();
          rows.forEach(list::add);
          return visible(db, request, list).map(visible -> new Rendered(list, visible));
        });
  }

  /** A page read as the login, and where it started. */
  private record Fetched(RowSet<Row> rows, Changelog.Bounds bounds, ChangePosition from) {}

  /**
   * The images of {@code rows} as reads show them ({@link RowImages}), mapped as the caller's role,
   * as every statement that could run code of the database's (a domain's check) is.
   */
  private Future<List<RowImages.Images>> images(CallerDb db, ToolRequest request, List<Row> rows) {
    if (rows.isEmpty()) {
      return Future.succeededFuture(List.of());
    }
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> RowImages.ofChanges(conn, rows));
  }

  /**
   * Of the page's changes to tables whose row-level security applies to the caller, the ids of
   * those it may see: an insert or update whose row, as it is now and read as the caller (its
   * policies decide), is exactly the row the change left. Matching the key alone would not do: a
   * key can be given to another row since, and the log's image may be a row the policies hide.
   * So a change the row moved on from is not shown, nor its before-image, nor a delete or
   * truncation (a deleted row cannot be read). Any failure (a column the role may not read)
   * shows none of them.
   */
  private Future<Set<Long>> visible(CallerDb db, ToolRequest request, List<Row> rows) {
    Map<String, JsonArray> wantedByTable = new LinkedHashMap<>();
    Map<String, String[]> keyColumns = new HashMap<>();
    for (Row r : rows) {
      String[] columns = r.getArrayOfStrings("key_columns");
      if (!Boolean.TRUE.equals(r.getBoolean("row_security")) || !List.of("INSERT", "UPDATE").contains(r.getString("op"))
          || !(r.getValue("key") instanceof JsonArray k) || columns == null || columns.length == 0 || r.getString("rls_after") == null) {
        continue;
      }
      String table = r.getString("relation");
      JsonObject key = new JsonObject();
      for (int i = 0; i < columns.length && i < k.size(); i++) {
        key.put(columns[i], k.getValue(i));
      }
      wantedByTable.computeIfAbsent(table, t -> new JsonArray()).add(new JsonObject().put("id", r.getLong("id")).put("key", key)
          .put("after", new JsonObject(r.getString("rls_after"))));
      keyColumns.put(table, columns);
    }
    if (wantedByTable.isEmpty()) {
      return Future.succeededFuture(Set.of());
    }
    Future<Set<Long>> read = CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> {
      Future<Set<Long>> chain = Future.succeededFuture(new HashSet<>());
      for (Map.Entry<String, JsonArray> e : wantedByTable.entrySet()) {
        String[] columns = keyColumns.get(e.getKey());
        StringBuilder live = new StringBuilder();
        StringBuilder given = new StringBuilder();
        for (int i = 0; i < columns.length; i++) {
          String col = SqlText.quoteIdent(columns[i]);
          live.append(i == 0 ? "" : ", ").append("t.").append(col);
          given.append(i == 0 ? "" : ", ").append("r.").append(col);
        }
        // relation is format('%I.%I') of the catalog's names; both sides go through to_jsonb in this session
        String sql = "SELECT (w.v->>'id')::bigint FROM jsonb_array_elements($1::jsonb) AS w(v) JOIN " + e.getKey() + " t ON ("
            + live + ") = (SELECT " + given + " FROM jsonb_populate_record(NULL::" + e.getKey() + ", w.v->'key') r)"
            + " WHERE to_jsonb(t) = to_jsonb(jsonb_populate_record(NULL::" + e.getKey() + ", w.v->'after'))";
        chain = chain.compose(found -> conn.preparedQuery(sql).execute(Tuple.of(e.getValue())).map(rs -> {
          for (Row r : rs) {
            found.add(r.getLong(0));
          }
          return found;
        }));
      }
      return chain;
    });
    // a role that may not read some column of the table sees none of its changes; any other failure
    // fails the call, since next_cursor would otherwise move past changes the caller never got
    return read.recover(err -> SqlStates.is(err, SqlStates.INSUFFICIENT_PRIVILEGE)
        ? Future.succeededFuture(Set.of()) : Future.failedFuture(err));
  }

  private static ChangePosition decode(String cursor, KeyRing key) {
    return ChangeCursor.decode(cursor, key).orElseThrow(() -> new ToolException(ErrorCode.INVALID_CURSOR,
        "The cursor was not issued by this database's changelog. Start again from the changelog_head that status reports.",
        new JsonObject().put("argument", "cursor")));
  }

  private static JsonObject change(Row r, String position, RowImages.Images images) {
    JsonObject c = new JsonObject()
        .put("position", position)
        .put("schema", r.getString("schema_name"))
        .put("table", r.getString("table_name"))
        .put("op", r.getString("op"));
    putIfPresent(c, "key", images.key());
    if (!Boolean.TRUE.equals(r.getBoolean("row_security"))) {
      putIfPresent(c, "before", images.before());  // under row-level security the row before may not have been the caller's
    }
    putIfPresent(c, "after", images.after());
    c.put("committed_at", r.getOffsetDateTime("committed_at").toString()).put("transaction", r.getString("xid"));
    if (r.getString("caller") != null) {
      c.put("caller", r.getString("caller"));
    }
    if (r.getString("tool") != null) {
      c.put("tool", r.getString("tool"));
    }
    JsonObject cause = ChangeCause.of(r.getString("cause_key"));
    if (cause != null) {
      c.put("caused_by", cause);
    }
    String plan = r.getString("plan_of");
    if (plan != null && plan.startsWith(ChangeCause.PROPOSAL_PREFIX)) {
      c.put("proposal", plan.substring(ChangeCause.PROPOSAL_PREFIX.length()));
    }
    return c;
  }

  private static void putIfPresent(JsonObject o, String field, Object value) {
    if (value != null) {
      o.put(field, value);
    }
  }
}
