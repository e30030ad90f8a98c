package dev.tidemark.query.impl;

import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.SqlErrors;
import dev.tidemark.database.SqlText;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.database.FilterCompiler;
import dev.tidemark.database.PgJson;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.RowImages;
import dev.tidemark.database.SqlParams;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import dev.tidemark.query.impl.WatchPatch.Change;
import dev.tidemark.query.impl.WatchPatch.Cut;
import dev.tidemark.query.impl.WatchPatch.Net;
import dev.tidemark.query.impl.WatchPatch.ShownKeys;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code watch}: a snapshot of the rows matching a filter, then patches computed from the
 * changelog (docs/watches.md). The first call takes the WAL position before its snapshot (the start
 * point) and a fence after it (the horizon); patches replay the changelog from the start point and
 * only once the relay has decoded past the horizon, so that a change committed while the snapshot
 * ran is never missed, and a patch is the net effect per key up to a transaction boundary past the
 * horizon, so that replaying a change the snapshot already held changes nothing. Everything a
 * later call needs is in the sealed cursor and in PostgreSQL: any node continues a watch.
 *
 * <p>The changelog and the catalog are read as Tidemark's login; the snapshot, the filter (applied
 * by PostgreSQL to the logged images), the mapping of images and the re-reads under row-level
 * security run as the caller's role. A waiting call holds no connection ({@link ChangelogWaits}).
 */
public final class WatchTool implements ReadTool {

  static final String KIND = "w";
  static final int DEFAULT_LIMIT = 1000;
  /** Under row-level security the cursor carries the shown keys: at most this many. */
  static final int RLS_MAX_ROWS = 1000;
  /** The most logged changes one call reads. */
  static final int MAX_PATCH_CHANGES = 1000;
  static final int MAX_WAIT_MS = 30_000;
  /** How often a watch whose horizon the relay has not reached yet looks again. */
  static final long HORIZON_POLL_MS = 50;
  /** The longest a waiting watch sleeps without a notice before it looks again. */
  static final long IDLE_POLL_MS = 1_000;

  private static final String START = "SELECT (pg_current_wal_insert_lsn() - '0/0')::bigint";

  /** As the caller: the table's columns, which of them the role may read, and whether row-level security applies to it. */
  private static final String COLUMNS = """
      SELECT a.attname::text AS name, has_column_privilege(c.oid, a.attnum, 'SELECT') AS readable,
             c.relrowsecurity AND NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolbypassrls OR rolsuper)) AS rls
        FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       WHERE c.oid = $1::int8::oid
       ORDER BY a.attnum""";

  /** As the caller: whether each column is still there and readable. */
  private static final String ACCESS = """
      SELECT u.col, a.attnum IS NOT NULL AS present,
             coalesce(a.attnum IS NOT NULL AND has_column_privilege($1::int8::oid, a.attnum, 'SELECT'), false) AS readable
        FROM unnest($2::text[]) AS u(col)
        LEFT JOIN pg_attribute a ON a.attrelid = $1::int8::oid AND a.attname = u.col AND a.attnum > 0 AND NOT a.attisdropped""";

  private static final String TABLE_NOW = """
      SELECT n.nspname::text || '.' || c.relname::text AS qualified
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1::int8::oid""";

  /**
   * How far the relay has decoded. The relay stores a large transaction a batch at a time, each
   * with its commit position, and moves {@code decoded_lsn} past it only with its last batch: a
   * transaction at or below it is whole in the changelog, and one above it may not be yet.
   */
  private static final String DECODED = "SELECT decoded_lsn FROM tidemark.changelog_state";

  /**
   * The earliest commit of the transactions a snapshot did not see (docs/watches.md): those at or
   * above its xmax, and those it lists as in progress.
   */
  private static final String UNSEEN_START =
      "SELECT min(position) FROM tidemark.changelog_commit WHERE xid >= $1::text::xid8 OR xid = ANY($2::text[]::xid8[])";

  private static final String PAGE = """
      SELECT k.position, c.id, c.xid::text AS xid, c.op, c.before::text AS before, c.after::text AS after,
             CASE WHEN jsonb_typeof(c.key) = 'array' AND jsonb_array_length(c.key) = cardinality($4::text[])
                  THEN (SELECT jsonb_object_agg(u.col, c.key -> (u.n - 1)::int) FROM unnest($4::text[]) WITH ORDINALITY u(col, n))::text
             END AS key,
             CASE WHEN c.op = 'UPDATE' AND jsonb_typeof(c.before) = 'object' AND cardinality($4::text[]) > 0 AND c.before ?& $4::text[]
                  THEN (SELECT jsonb_object_agg(u.col, c.before -> u.col) FROM unnest($4::text[]) u(col))::text
             END AS old_key
        FROM tidemark.changelog_commit k
        JOIN tidemark.changelog c ON c.xid = k.xid
       WHERE c.relid = $1::int8::oid AND k.position >= $2 AND (k.position > $2 OR c.id > $3) AND c.op <> 'DDL'
         AND k.position <= $6
       ORDER BY k.position, c.id
       LIMIT $5""";

  private final DatabaseConfig database;
  private final Pool pool;
  private final Pool store;
  private final CatalogCache catalog;
  private final CursorCodec cursors;
  private final ChangelogStaleness fences;
  private final ChangelogWaits waits;
  private final WaitingWatches waiting;
  private final int maxWaitingPerCaller;

  /**
   * @param pool Tidemark's login on the served database: the WAL positions and the table's name
   * @param store its login on the database the changelog is stored in ({@code pool} itself unless database.changelog-url is set)
   * @param maxWaitingPerCaller watch.max-waiting-per-caller, counted over the node's query instances
   */
  public WatchTool(Vertx vertx, DatabaseConfig database, Pool pool, Pool store, CatalogCache catalog, CursorCodec cursors,
      ChangelogWaits waits, int maxWaitingPerCaller) {
    this.database = database;
    this.pool = pool;
    this.store = store;
    this.catalog = catalog;
    this.cursors = cursors;
    this.fences = new ChangelogStaleness(pool, store);
    this.waits = waits;
    this.waiting = WaitingWatches.of(vertx, database.name());
    this.maxWaitingPerCaller = maxWaitingPerCaller;
  }

  /**
   * What a cursor holds. {@code from} is exclusive; {@code horizon} and {@code unseen} (the
   * snapshot's xmax, then the transactions it saw in progress) only until the first patch.
   */
  record Watch(long oid, String table, List<String> columns, List<String> keyColumns, ChangePosition from, Long horizon,
               List<String> unseen, boolean rls, String shown) {

    JsonObject toJson(String shape) {
      JsonObject c = new JsonObject().put("k", KIND).put("f", shape).put("o", oid).put("q", table)
          .put("c", new JsonArray(columns)).put("pk", new JsonArray(keyColumns)).put("p", from.commit()).put("i", from.change())
          .put("r", rls);
      if (horizon != null) {
        c.put("h", horizon);
        if (!unseen.isEmpty()) {
          c.put("x", new JsonArray(unseen));
        }
      }
      if (rls) {
        c.put("s", shown);
      }
      return c;
    }

    static Watch fromJson(JsonObject c) {
      try {
        return new Watch(c.getLong("o"), c.getString("q"), strings(c.getJsonArray("c")), strings(c.getJsonArray("pk")),
            new ChangePosition(c.getLong("p"), c.getLong("i")), c.getLong("h"), strings(c.getJsonArray("x", new JsonArray())),
            c.getBoolean("r", false), c.getString("s", ""));
      } catch (RuntimeException e) {
        throw CursorCodec.invalid();
      }
    }

    /** Past every change up to {@code to}, the horizon behind it. */
    Watch at(ChangePosition to, String shownNow) {
      return new Watch(oid, table, columns, keyColumns, to.isAfter(from) ? to : from, null, List.of(), rls, shownNow);
    }
  }

  private static List<String> strings(JsonArray a) {
    return a.stream().map(String::valueOf).toList();
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    Object wait = args.containsKey("wait_ms") ? args.getValue("wait_ms") : Integer.valueOf(0);
    long w = wait instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) ? n.longValue() : -1;
    if (w < 0 || w > MAX_WAIT_MS) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS,
          "wait_ms is an integer from 0 to " + MAX_WAIT_MS + ". " + ErrorCode.INVALID_ARGUMENTS.hint(),
          new JsonObject().put("argument", "wait_ms")));
    }
    String shape = CursorCodec.fingerprint(new JsonArray().add(args.getString("table")).add(args.getValue("where"))
        .add(args.getValue("columns")).encode());
    String tableArg = args.getString("table");
    if (args.getString("cursor") == null) {
      return catalog.use(tableArg, table -> snapshot(db, request, table, shape, "snapshot", null));
    }
    Watch watch;
    try {
      JsonObject c = cursors.decode(args.getString("cursor"), KIND, request.caller().id());
      if (!shape.equals(c.getString("f"))) {
        throw new ToolException(ErrorCode.INVALID_CURSOR,
            "The cursor belongs to another table, where or columns; send the same ones, or start again without a cursor.",
            new JsonObject().put("argument", "cursor"));
      }
      watch = Watch.fromJson(c);
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    long deadline = System.currentTimeMillis() + w;
    Runnable done;
    try {
      done = w == 0 ? () -> { } : waiting.enter(request.caller().id(), deadline, maxWaitingPerCaller);
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    waits.begin(request.requestId());
    Future<ToolReply> out = follow(db, request, shape, watch, deadline);
    return out.onComplete(x -> {
      waits.finish(request.requestId());
      done.run();
    });
  }

  // ---- the first call, and a reset ----

  private Future<ToolReply> snapshot(CallerDb db, ToolRequest request, Table table, String shape, String kind, String reason) {
    JsonObject args = request.arguments();
    if (!"table".equals(table.kind()) && !"partitioned_table".equals(table.kind())) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, table.qualified() + " is a " + table.kind()
          + ": watch follows tables, whose changes the changelog captures.", new JsonObject().put("argument", "table")));
    }
    if (table.primaryKey().isEmpty()) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, table.qualified()
          + " has no primary key, and watch names each row by its key. Use changes_since for it.", new JsonObject().put("argument", "table")));
    }
    int asked = args.getInteger("limit", DEFAULT_LIMIT);
    return pool.query(START).execute().map(r -> r.iterator().next().getLong(0)).compose(start ->
        CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> catalog.guarded(table).compose(v ->
            conn.preparedQuery(COLUMNS).execute(Tuple.of(table.oid()))).compose(cols -> {
              Set<String> readable = new LinkedHashSet<>();
              boolean rls = false;
              for (Row r : cols) {
                rls = Boolean.TRUE.equals(r.getBoolean("rls"));
                if (Boolean.TRUE.equals(r.getBoolean("readable"))) {
                  readable.add(r.getString("name"));
                }
              }
              if (readable.isEmpty()) {
                return Future.failedFuture(dev.tidemark.database.TableCatalog.notFound(args.getString("table"), database.schemas()));
              }
              List<String> watched = watched(table, args.getJsonArray("columns"), readable);
              int limit = rls ? Math.min(asked, RLS_MAX_ROWS) : asked;
              SqlParams params = new SqlParams();
              String where = FilterCompiler.compile(args.getJsonObject("where"), table, params);
              List<String> items = new ArrayList<>();
              watched.forEach(c -> items.add(SqlText.quoteIdent(c)));
              List<String> order = new ArrayList<>();
              table.primaryKey().forEach(c -> order.add(SqlText.quoteIdent(c)));
              // one statement, one snapshot: the rows and the transactions it saw in progress
              String sql = table.shapeTag() + "SELECT t.*, s.tidemark_snapshot FROM (SELECT pg_current_snapshot()::text AS tidemark_snapshot) s"
                  + " LEFT JOIN LATERAL (SELECT " + String.join(", ", items) + " FROM " + table.sql() + " WHERE (" + where + ")"
                  + " ORDER BY " + String.join(", ", order) + " LIMIT " + params.add((long) limit + 1) + ") t ON true";
              boolean underRls = rls;
              return conn.preparedQuery(sql).execute(params.tuple()).map(rows -> {
                JsonArray out = new JsonArray();
                String snap = null;
                for (Row r : rows) {
                  snap = r.getString(watched.size());
                  JsonObject row = PgJson.row(r, watched.size());
                  if (row.getValue(table.primaryKey().get(0)) != null) {
                    out.add(row);
                  }
                }
                if (out.size() > limit) {
                  throw new ToolException(ErrorCode.LIMIT_EXCEEDED, "More than " + limit + " rows match"
                      + (underRls && asked > RLS_MAX_ROWS ? " (a watch under row-level security holds at most " + RLS_MAX_ROWS + ")" : "")
                      + ", and a watch holds every matching row. Narrow where, or raise limit (at most "
                      + (underRls ? RLS_MAX_ROWS : 10000) + ").", new JsonObject().put("argument", "limit"));
                }
                return new Snapshot(watched, out, unseen(snap), underRls);
              });
            }).recover(err -> Future.failedFuture(SqlErrors.argumentError(err, "where"))))
        .compose(snap -> fences.horizon().map(horizon -> {
          List<String> keys = new ArrayList<>();
          for (Object o : snap.rows()) {
            keys.add(key((JsonObject) o, table.primaryKey()).encode());
          }
          // replay from the start point itself: a change there may be missing from the snapshot
          Watch watch = new Watch(table.oid(), table.qualified(), snap.columns(), table.primaryKey(), new ChangePosition(start - 1, Long.MAX_VALUE),
              horizon, snap.unseen(), snap.rls(), snap.rls() ? ShownKeys.of(keys).encode() : "");
          JsonObject out = new JsonObject().put("kind", kind).put("table", table.qualified())
              .put("key_columns", new JsonArray(table.primaryKey())).put("columns", new JsonArray(snap.columns()))
              .put("rows", snap.rows()).put("cursor", cursors.encode(watch.toJson(shape), request.caller().id()));
          if (reason != null) {
            out.put("reason", reason);
          }
          String summary = "watch: " + (reason == null ? kind : kind + " (" + reason + ")") + ", " + snap.rows().size()
              + (snap.rows().size() == 1 ? " row" : " rows") + " of " + table.qualified() + "; key " + table.primaryKey()
              + "; cursor " + out.getString("cursor");
          return ToolReply.ok(summary, out, snap.rows());
        })));
  }

  private record Snapshot(List<String> columns, JsonArray rows, List<String> unseen, boolean rls) {}

  /** The primary key first, then the named columns (or every readable one); PERMISSION_DENIED for a named column the role may not read. */
  private static List<String> watched(Table table, JsonArray named, Set<String> readable) {
    Set<String> out = new LinkedHashSet<>();
    for (String pk : table.primaryKey()) {
      if (!readable.contains(pk)) {
        throw new ToolException(ErrorCode.PERMISSION_DENIED, "Your role may not read the primary key column " + pk + " of "
            + table.qualified() + ", and a watch names each row by its key. " + ErrorCode.PERMISSION_DENIED.hint());
      }
      out.add(pk);
    }
    if (named == null) {
      table.columns().keySet().stream().filter(readable::contains).forEach(out::add);
      return List.copyOf(out);
    }
    for (Object o : named) {
      Column c = table.column(String.valueOf(o), "columns");
      if (!readable.contains(c.name())) {
        throw new ToolException(ErrorCode.PERMISSION_DENIED, "Your role may not read column " + c.name() + " of " + table.qualified()
            + ". " + ErrorCode.PERMISSION_DENIED.hint(), new JsonObject().put("argument", "columns"));
      }
      out.add(c.name());
    }
    return List.copyOf(out);
  }

  /**
   * What a snapshot did not see, from pg_snapshot's text form {@code xmin:xmax:xip,...}: its xmax
   * (every transaction at or above it), then the transactions it lists as in progress.
   */
  static List<String> unseen(String snapshot) {
    if (snapshot == null) {
      return List.of();
    }
    String[] parts = snapshot.split(":", -1);
    if (parts.length < 3) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    out.add(parts[1]);
    if (!parts[2].isEmpty()) {
      out.addAll(List.of(parts[2].split(",")));
    }
    return out;
  }

  private static JsonArray key(JsonObject row, List<String> keyColumns) {
    JsonArray k = new JsonArray();
    keyColumns.forEach(c -> k.add(row.getValue(c)));
    return k;
  }

  // ---- later calls ----

  /** What the changelog holds for a watch, read in one snapshot as the login. */
  private record Log(String terminal, boolean expired, boolean ready, List<Change> changes, boolean full, ChangePosition head,
                     Watch watch) {}

  private Future<ToolReply> follow(CallerDb db, ToolRequest request, String shape, Watch w, long deadline) {
    return readLog(w).compose(log -> {
      if (log.terminal() != null) {
        return Future.succeededFuture(terminal(w, log.terminal()));
      }
      if (log.expired()) {
        return reset(db, request, shape, w, "expired");
      }
      if (!log.ready() || log.changes().isEmpty()) {
        Watch next = log.ready() ? w.at(log.head(), w.shown()) : w;
        return waitOrCheckpoint(db, request, shape, next, deadline, log.ready() ? IDLE_POLL_MS : HORIZON_POLL_MS);
      }
      Watch from = log.watch();
      Cut cut = WatchPatch.cut(log.changes(), log.full());
      if (cut.taken().isEmpty() || (from.horizon() != null && cut.more() && cut.nextPosition() < from.horizon())) {
        // a transaction larger than a page, or a first patch that cannot reach past the horizon in one page
        return reset(db, request, shape, w, "too_large");
      }
      if (WatchPatch.truncates(cut.taken())) {
        return reset(db, request, shape, w, "truncated");
      }
      Change last = cut.taken().get(cut.taken().size() - 1);
      ChangePosition through = new ChangePosition(last.position(), last.id());
      ChangePosition to = cut.more() || !log.head().isAfter(through) ? through : log.head();
      return patch(db, request, shape, from, cut, to).compose(reply -> reply != null ? Future.succeededFuture(reply)
          // nothing relevant in these changes: look further (or wait) from past them
          : waitOrCheckpoint(db, request, shape, w.at(to, w.shown()), deadline, IDLE_POLL_MS));
    });
  }

  private Future<ToolReply> waitOrCheckpoint(CallerDb db, ToolRequest request, String shape, Watch w, long deadline, long pollMs) {
    long left = deadline - System.currentTimeMillis();
    if (left <= 0) {
      return checkpoint(db, request, shape, w);
    }
    return waits.next(request.requestId(), Math.min(left, pollMs)).compose(stop -> stop ? checkpoint(db, request, shape, w) : follow(db, request, shape, w, deadline));
  }

  private Future<Log> readLog(Watch w) {
    // the table's name now from the served database; then the changelog in one snapshot of the database it is stored in
    return pool.preparedQuery(TABLE_NOW).execute(Tuple.of(w.oid())).compose(now -> {
      if (now.size() == 0) {
        return Future.succeededFuture(new Log("table_dropped", false, false, List.of(), false, null, w));
      }
      if (!w.table().equals(now.iterator().next().getString(0))) {
        return Future.succeededFuture(new Log("table_renamed", false, false, List.of(), false, null, w));
      }
      return store.withTransaction(conn ->
        conn.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET LOCAL statement_timeout = "
                + database.statementTimeoutMs()).execute()
            .compose(x -> Changelog.bounds(conn).compose(bounds -> conn.query(DECODED).execute().compose(d -> {
                Long decodedLsn = d.iterator().next().getLong(0);
                long decoded = decodedLsn == null ? 0 : decodedLsn;
                // every change up to here is whole and stored: a checkpoint may move past it
                ChangePosition head = new ChangePosition(decoded, Long.MAX_VALUE);
                boolean ready = w.horizon() == null || decoded >= w.horizon();
                if (!ready) {
                  return Future.succeededFuture(new Log(null, false, false, List.of(), false, head, w));
                }
                return replayFrom(conn, w).compose(from -> {
                  if (from.from().compareTo(bounds.pruned()) < 0) {
                    return Future.succeededFuture(new Log(null, true, true, List.of(), false, head, w));
                  }
                  return conn.preparedQuery(PAGE).execute(Tuple.of(w.oid(), from.from().commit(), from.from().change(),
                      w.keyColumns().toArray(new String[0]), MAX_PATCH_CHANGES, decoded)).map(rows -> {
                        List<Change> changes = new ArrayList<>();
                        for (Row r : rows) {
                          changes.addAll(WatchPatch.split(new Change(r.getLong("position"), r.getLong("id"), r.getString("xid"),
                              r.getString("op"), r.getString("key"), r.getString("before"), r.getString("after")), r.getString("old_key")));
                        }
                        return new Log(null, false, true, changes, rows.size() == MAX_PATCH_CHANGES, head, from);
                      });
                });
              }))));
    });
  }

  /**
   * Before the first patch, the start point moves back to the commit of any transaction the
   * snapshot did not see that committed before it: a transaction's commit record can precede the
   * start point while its rows were not yet visible to the snapshot. A snapshot does not see the
   * transactions it lists as in progress nor any at or above its xmax (which PostgreSQL does not
   * list: xmax is one past the latest transaction that had completed).
   */
  private static Future<Watch> replayFrom(SqlConnection conn, Watch w) {
    if (w.horizon() == null || w.unseen().isEmpty()) {
      return Future.succeededFuture(w);
    }
    List<String> inProgress = w.unseen().subList(1, w.unseen().size());
    return conn.preparedQuery(UNSEEN_START).execute(Tuple.tuple().addString(w.unseen().get(0))
        .addArrayOfString(inProgress.toArray(new String[0]))).map(rows -> {
      Long min = rows.iterator().next().getLong(0);
      if (min == null || min > w.from().commit()) {
        return w;
      }
      return new Watch(w.oid(), w.table(), w.columns(), w.keyColumns(), new ChangePosition(min - 1, Long.MAX_VALUE), w.horizon(),
          List.of(), w.rls(), w.shown());
    });
  }

  private Future<ToolReply> reset(CallerDb db, ToolRequest request, String shape, Watch w, String reason) {
    return catalog.use(w.table(), table -> table.oid() != w.oid() ? Future.succeededFuture(terminal(w, "table_dropped"))
            : snapshot(db, request, table, shape, "reset", reason))
        .recover(err -> notFound(err) ? Future.succeededFuture(terminal(w, "access_revoked")) : Future.failedFuture(err));
  }

  private static boolean notFound(Throwable err) {
    return err instanceof ToolException te && te.code() == ErrorCode.NOT_FOUND;
  }

  private Future<ToolReply> checkpoint(CallerDb db, ToolRequest request, String shape, Watch w) {
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> access(conn, w, request)).map(lost -> {
      if (lost != null) {
        return terminal(w, lost);
      }
      JsonObject out = new JsonObject().put("kind", "checkpoint").put("table", w.table())
          .put("cursor", cursors.encode(w.toJson(shape), request.caller().id()));
      return ToolReply.ok("watch: checkpoint, nothing relevant changed in " + w.table() + "; cursor " + out.getString("cursor"), out);
    });
  }

  /** Null while the caller may still read every column the watch shows and filters on; else the terminal reason. */
  private Future<String> access(SqlConnection conn, Watch w, ToolRequest request) {
    Set<String> needed = new LinkedHashSet<>(w.columns());
    needed.addAll(FilterCompiler.columns(request.arguments().getJsonObject("where")));
    return conn.preparedQuery(ACCESS).execute(Tuple.tuple().addLong(w.oid()).addArrayOfString(needed.toArray(new String[0]))).map(rows -> {
      String lost = null;
      for (Row r : rows) {
        if (!Boolean.TRUE.equals(r.getBoolean("present"))) {
          return "table_changed";
        }
        if (!Boolean.TRUE.equals(r.getBoolean("readable"))) {
          lost = "access_revoked";
        }
      }
      return lost;
    });
  }

  private static ToolReply terminal(Watch w, String reason) {
    JsonObject out = new JsonObject().put("kind", "terminal").put("table", w.table()).put("reason", reason);
    String why = switch (reason) {
      case "table_dropped" -> "the table was dropped";
      case "table_renamed" -> "the table was renamed or moved";
      case "table_changed" -> "a column the watch shows or filters on is gone";
      default -> "your role may no longer read the table or a column the watch uses";
    };
    return ToolReply.ok("watch: terminal (" + reason + "): " + why + "; stop watching " + w.table() + ".", out);
  }

  /**
   * The patch of {@code cut}, as the caller: null when none of its changes concerns the watched
   * rows. The filter is PostgreSQL's, applied to each logged image turned back into a row of the
   * table; under row-level security a row is upserted only when the caller reads it now, by its
   * key, with the values the log holds for every watched column, and a key is deleted only when the
   * caller was shown it.
   */
  private Future<ToolReply> patch(CallerDb db, ToolRequest request, String shape, Watch w, Cut cut, ChangePosition to) {
    List<Net> nets = WatchPatch.net(cut.taken(), w.keyColumns());
    JsonObject where = request.arguments().getJsonObject("where");
    return catalog.use(w.table(), table -> {
      if (table.oid() != w.oid()) {
        return Future.succeededFuture(terminal(w, "table_dropped"));
      }
      return CallerSessions.readOnly(db, request, database.statementTimeoutMs(), conn -> access(conn, w, request).compose(lost -> {
        if (lost != null) {
          return Future.succeededFuture(terminal(w, lost));
        }
        List<String> images = new ArrayList<>();
        nets.forEach(n -> images.addAll(n.images()));
        return catalog.guarded(table).compose(v -> matches(conn, table, where, images)).compose(matched -> {
          List<Boolean> inFilter = new ArrayList<>();
          List<Boolean> everIn = new ArrayList<>();
          List<String> finals = new ArrayList<>();
          int at = 0;
          for (Net n : nets) {
            // a row whose old state is not known may have been inside the filter: a delete of a key not held is harmless
            boolean ever = n.beforeUnknown();
            boolean last = false;
            for (int i = 0; i < n.images().size(); i++) {
              boolean m = matched.get(at++);
              ever |= m;
              last = m;
            }
            boolean in = !n.deleted() && last && n.images().get(n.images().size() - 1).equals(n.finalImage());
            inFilter.add(in);
            everIn.add(ever);
            finals.add(in ? n.finalImage() : null);
          }
          Future<Set<Integer>> visible = w.rls() ? visibleNow(conn, table, where, w.columns(), finals) : Future.succeededFuture(null);
          // the keys and the final rows mapped in one statement: each is an image of the table
          List<String> toMap = new ArrayList<>(nets.stream().map(Net::key).toList());
          toMap.addAll(finals);
          return visible.compose(seen -> RowImages.decode(conn, table.sql(), toMap).map(mapped -> {
                List<JsonObject> mappedKeys = mapped.subList(0, nets.size());
                List<JsonObject> rows = mapped.subList(nets.size(), mapped.size());
                ShownKeys shown = w.rls() ? ShownKeys.decode(w.shown()) : null;
                JsonArray changes = new JsonArray();
                for (int i = 0; i < nets.size(); i++) {
                  JsonArray key = key(mappedKeys.get(i), w.keyColumns());
                  String keyText = key.encode();
                  boolean upsert = inFilter.get(i) && (seen == null || seen.contains(i));
                  if (upsert) {
                    changes.add(new JsonObject().put("op", "upsert").put("key", key).put("row", only(rows.get(i), w.columns())));
                    if (shown != null) {
                      shown.add(keyText);
                    }
                  } else if (shown != null ? shown.contains(keyText) : everIn.get(i)) {
                    changes.add(new JsonObject().put("op", "delete").put("key", key));
                    if (shown != null) {
                      shown.remove(keyText);
                    }
                  }
                }
                if (shown != null && shown.size() > RLS_MAX_ROWS) {
                  throw new ToolException(ErrorCode.LIMIT_EXCEEDED, "The watched rows grew past " + RLS_MAX_ROWS
                      + ", the most a watch under row-level security holds. Watch again with a narrower where.",
                      new JsonObject().put("argument", "where"));
                }
                if (changes.isEmpty() && !cut.more()) {
                  return (ToolReply) null;
                }
                Watch next = w.at(to, shown == null ? "" : shown.encode());
                JsonObject out = new JsonObject().put("kind", "patch").put("table", w.table()).put("changes", changes)
                    .put("has_more", cut.more()).put("cursor", cursors.encode(next.toJson(shape), request.caller().id()));
                return ToolReply.ok("watch: patch, " + changes.size() + (changes.size() == 1 ? " change" : " changes")
                    + (cut.more() ? ", more waiting" : ", up to date") + "; cursor " + out.getString("cursor"), out, changes);
              }));
        });
      }));
    }).recover(err -> notFound(err) ? Future.succeededFuture(terminal(w, "table_dropped")) : Future.failedFuture(err));
  }

  /** For each image (jsonb text of a whole row), whether the filter holds for it, evaluated by PostgreSQL. */
  private static Future<List<Boolean>> matches(SqlConnection conn, Table table, JsonObject where, List<String> images) {
    if (images.isEmpty()) {
      return Future.succeededFuture(List.of());
    }
    SqlParams params = new SqlParams();
    String filter = FilterCompiler.compile(where, table, params);
    String array = params.add("[" + String.join(",", images) + "]");
    String sql = "SELECT coalesce((" + filter + "), false) FROM jsonb_array_elements(" + array + "::text::jsonb)"
        + " WITH ORDINALITY AS tidemark_e(tidemark_image, tidemark_n)"
        + " CROSS JOIN LATERAL jsonb_populate_record(NULL::" + table.sql() + ", tidemark_e.tidemark_image) AS tidemark_r"
        + " ORDER BY tidemark_e.tidemark_n";
    return conn.preparedQuery(sql).execute(params.tuple()).map(rows -> {
      List<Boolean> out = new ArrayList<>();
      rows.forEach(r -> out.add(Boolean.TRUE.equals(r.getBoolean(0))));
      return out;
    });
  }

  /**
   * Of the final images (null for none), the indexes of those whose row the caller reads now, by
   * its key, inside the filter, with exactly the logged values in every watched column.
   */
  private static Future<Set<Integer>> visibleNow(SqlConnection conn, Table table, JsonObject where, List<String> columns,
      List<String> finals) {
    JsonArray wanted = new JsonArray();
    for (int i = 0; i < finals.size(); i++) {
      if (finals.get(i) != null) {
        wanted.add(new JsonObject().put("n", i).put("image", new JsonObject(finals.get(i))));
      }
    }
    if (wanted.isEmpty()) {
      return Future.succeededFuture(Set.of());
    }
    SqlParams params = new SqlParams();
    String filter = FilterCompiler.compile(where, table, params);
    String array = params.add(wanted.encode());
    List<String> keyNow = new ArrayList<>();
    List<String> keyLogged = new ArrayList<>();
    for (String k : table.primaryKey()) {
      keyNow.add(SqlText.quoteIdent(k));
      keyLogged.add("tidemark_r." + SqlText.quoteIdent(k));
    }
    List<String> now = new ArrayList<>();
    List<String> logged = new ArrayList<>();
    for (String c : columns) {
      now.add("tidemark_t." + SqlText.quoteIdent(c));
      logged.add("tidemark_r." + SqlText.quoteIdent(c));
    }
    List<String> inner = columns.stream().map(SqlText::quoteIdent).toList();
    // inside the lateral subquery unqualified names are the table's, as the filter needs them
    String sql = "SELECT (tidemark_w.v->>'n')::int FROM jsonb_array_elements(" + array + "::text::jsonb) AS tidemark_w(v)"
        + " CROSS JOIN LATERAL jsonb_populate_record(NULL::" + table.sql() + ", tidemark_w.v->'image') AS tidemark_r"
        + " CROSS JOIN LATERAL (SELECT " + String.join(", ", inner) + " FROM " + table.sql()
        + " WHERE (" + String.join(", ", keyNow) + ") = (" + String.join(", ", keyLogged) + ") AND (" + filter + ")) AS tidemark_t"
        + " WHERE jsonb_build_array(" + String.join(", ", now) + ") = jsonb_build_array(" + String.join(", ", logged) + ")";
    return conn.preparedQuery(sql).execute(params.tuple()).map(rows -> {
      Set<Integer> out = new HashSet<>();
      rows.forEach(r -> out.add(r.getInteger(0)));
      return out;
    });
  }

  private static JsonObject only(JsonObject row, List<String> columns) {
    JsonObject out = new JsonObject();
    columns.forEach(c -> out.put(c, row.getValue(c)));
    return out;
  }
}
