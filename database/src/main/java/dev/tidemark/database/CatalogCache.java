package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.TableCatalog.Table;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import dev.tidemark.database.CallerPools.CallerDb;
import io.vertx.sqlclient.Pool;
import dev.tidemark.contract.ToolRequest;
import io.vertx.sqlclient.Cursor;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What {@code get_row} and {@code list_rows} know of a table's shape (columns, types, primary key),
 * shared by every caller on this node for a short while. Looking a table up in PostgreSQL's catalog
 * costs more than reading a row by its key, and a read resets the session afterwards, so the
 * lookup could never stay prepared: without this cache it was most of a call's database time.
 *
 * <p>Three things keep a reused shape honest. Who may read what is never cached: a {@code get_row}
 * on a plain table is refused by PostgreSQL's own privilege check as the caller's role, and every
 * other read checks, as the caller's role and in the same round trip as its statement, that the
 * caller may read the table and that the table is still the one looked up (same OID). A schema change notice drops
 * every entry. And a statement that fails because the table changed shape (a column or type that
 * is gone, or a column the caller names that the cached shape lacks) looks the table up again and
 * runs once more. What is left is a short window, at most {@code database.catalog-cache-ms}, in
 * which a primary key redefined on the same table is not yet known.
 */
public final class CatalogCache {

  /** NULL when no relation has this OID any more: the table was dropped, perhaps recreated. */
  private static final String READABLE = "SELECT has_table_privilege($1::int8::oid, 'SELECT')";

  /** SQLSTATEs of a statement built from a shape that no longer holds. */
  private static final Set<String> SHAPE_CHANGED = Set.of(
      SqlStates.UNDEFINED_TABLE,
      SqlStates.UNDEFINED_COLUMN,
      SqlStates.DATATYPE_MISMATCH,
      SqlStates.UNDEFINED_FUNCTION,     // a cast to a type that changed
      SqlStates.CANNOT_COERCE,
      SqlStates.FEATURE_NOT_SUPPORTED); // "cached plan must not change result type"

  /**
   * The caller may read relation $1 (NULL: no such relation), and what its catalog rows are now:
   * run as the caller, inside the change's own transaction, so it sees what the change will.
   */
  private static final String CURRENT = "SELECT has_table_privilege(c.oid, 'SELECT') AS may, " + TableCatalog.FINGERPRINT
      + " AS fingerprint FROM pg_class c WHERE c.oid = $1::int8::oid";

  private record Entry(Future<TableCatalog.Shape> shape, long loadedAtNanos) {
    Future<Table> table() {
      return shape.map(TableCatalog.Shape::table);
    }
  }

  /** The cached shape no longer matches the database. */
  private static final class ShapeChanged extends RuntimeException {
    ShapeChanged() {
      super("the table changed since it was looked up", null, false, false);
    }
  }

  private final Pool pool;
  private final FunctionGuard functions;
  private final long timeoutMs;
  private final List<String> schemas;
  private final long ttlNanos;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  /** Counts the clears, so that a lookup that began before one is not kept after it. */
  private final java.util.concurrent.atomic.AtomicLong generation = new java.util.concurrent.atomic.AtomicLong();

  /**
   * @param pool Tidemark's login, which looks tables up (their shape is the same for every caller;
   *     whether a caller may read one is checked as the caller with every read)
   * @param timeoutMs the statement timeout of a read
   */
  public CatalogCache(Pool pool, List<String> schemas, long ttlMs, long timeoutMs) {
    this(pool, schemas, ttlMs, timeoutMs, null);
  }

  /**
   * @param functions the function check of the reads: a read of a relation whose reading runs code
   *     someone wrote (a view's query, a policy) is refused when that code reaches a function the
   *     check refuses; null for a cache that serves no read
   */
  public CatalogCache(Pool pool, List<String> schemas, long ttlMs, long timeoutMs, FunctionGuard functions) {
    this.pool = pool;
    this.timeoutMs = timeoutMs;
    this.schemas = List.copyOf(schemas);
    this.ttlNanos = ttlMs * 1_000_000L;
    this.functions = functions;
  }

  /** The statement timeout of a read. */
  public long timeoutMs() {
    return timeoutMs;
  }

  /** Forgets every table: the schema changed. */
  public void clear() {
    generation.incrementAndGet();
    entries.clear();
  }

  /**
   * Runs {@code work} with the shape of {@code name}. When the shape came from the cache and the
   * work fails because it no longer holds, the table is looked up again and the work runs once more.
   */
  public <T> Future<T> use(String name, Function<Table, Future<T>> work) {
    Entry cached = fresh(name);
    if (cached == null) {
      return load(name).table().compose(work);
    }
    return cached.table().compose(work).recover(err -> {
      if (!shapeChanged(err)) {
        return Future.failedFuture(err);
      }
      entries.remove(name, cached);
      return load(name).table().compose(work);
    });
  }

  /**
   * For a change, in its transaction on {@code conn} (as the caller): what {@code build} makes of
   * the table named {@code name}, as if the table had been looked up as the caller in that
   * transaction ({@link TableCatalog#resolve}), which is what happens whenever the cached shape may
   * not do. The cached shape does when, in the transaction, the caller may read the relation and
   * its catalog rows are the ones the shape was read from (one small statement instead of the
   * lookup, which cost a change more database time than its own INSERT), and {@code build} accepts
   * it: an argument it refuses (a column or an enum label the cached shape lacks) is judged again
   * against the caller's own lookup, since nothing has run in the transaction yet.
   */
  public <T> Future<T> inTransaction(SqlConnection conn, String name, Function<Table, T> build) {
    if (ttlNanos == 0) {
      return exact(conn, name, build);  // nothing is kept: a shape read now would be checked against itself
    }
    Entry cached = fresh(name);
    Entry entry = cached != null ? cached : load(name);
    return entry.shape().transform(loaded -> {
      if (loaded.failed()) {
        return exact(conn, name, build);
      }
      Table table = loaded.result().table();
      return conn.preparedQuery(CURRENT).execute(Tuple.of(table.oid())).compose(rows -> {
        Row now = rows.size() == 0 ? null : rows.iterator().next();
        if (now == null || !loaded.result().fingerprint().equals(now.getString("fingerprint"))) {
          entries.remove(name, entry);
          return exact(conn, name, build);
        }
        if (!Boolean.TRUE.equals(now.getBoolean("may"))) {
          return exact(conn, name, build);  // the caller's own lookup names what it may not read, or finds another table
        }
        try {
          return Future.succeededFuture(build.apply(table));
        } catch (ToolException refused) {
          return exact(conn, name, build);
        }
      });
    });
  }

  private <T> Future<T> exact(SqlConnection conn, String name, Function<Table, T> build) {
    return TableCatalog.resolve(conn, schemas, name).map(build);
  }

  /**
   * Runs {@code sql} on {@code table} (looked up as {@code name}) as the caller: on a table whose
   * reading runs no code anyone else wrote, as one statement without a transaction of its own (see
   * {@link #readPlain}); on any other, in the caller's read transaction on the resetting pool, where
   * the check that the caller may read the table, and that it is still the relation looked up,
   * goes out in the same round trip, before the statement: NOT_FOUND when the caller may not read it.
   */
  public Future<RowSet<Row>> read(CallerDb db, ToolRequest request, Table table, String name, String sql, Tuple params) {
    Supplier<Future<RowSet<Row>>> checked = () -> run(db, request, table, name, false, conn -> conn.preparedQuery(sql).execute(params),
        Future::succeededFuture);
    if (!table.readRunsNoUserCode() || db.preparing() == db.pool()) {
      return checked.get();
    }
    // what the one statement cannot tell apart goes the checked way, on the resetting pool: no row
    // (or a relation that is no longer the one looked up, which the statement's gate reads as no
    // row), and a refusal (a privilege, or a policy added since the lookup)
    return readPlain(db, request, sql, params).transform(ar -> ar.succeeded() && ar.result().size() > 0 ? Future.succeededFuture(ar.result())
        : ar.failed() && !refused(ar.cause()) ? Future.failedFuture(ar.cause())
        : checked.get());
  }

  /**
   * One statement of Tidemark's own on a table whose reading runs no code anyone else wrote, in
   * one round trip and in the implicit transaction PostgreSQL gives a statement, on a connection
   * of the caller's role whose session is read-only, has the read's statement timeout and has
   * row-level security off (so that a policy added since the lookup refuses the statement rather
   * than runs) from its login on ({@link CallerPools}). Nothing it runs can read the caller's
   * identity or leave anything on the session, so it needs no BEGIN, no setup, no rollback and no
   * reset, and its statement stays prepared on the connection. The statement carries its own gate
   * (see GetRowTool): the relation it names must still have the OID looked up, or it reads no
   * row, before any of it runs. PostgreSQL checks the caller's privileges as it starts the statement.
   */
  private Future<RowSet<Row>> readPlain(CallerDb db, ToolRequest request, String sql, Tuple params) {
    return db.connection(db.preparing(), request.caller()).compose(lent -> RunningStatements.running(request.requestId(), lent.conn(),
        lent.conn().preparedQuery(sql).execute(params)).eventually(lent::close));
  }

  /**
   * Like {@link #read}, through a portal over {@code sql} that {@code reader} reads as it likes
   * (a few rows at a time, to bound what a call holds): the statement is prepared in the same
   * round trip as the check, and the portal is read only once the check passed.
   */
  public <T> Future<T> readPortal(CallerDb db, ToolRequest request, Table table, String name, String sql, Tuple params,
      Function<Cursor, Future<T>> reader) {
    return run(db, request, table, name, conn -> conn.prepare(sql), ps -> reader.apply(ps.cursor(params)));
  }

  /**
   * The checked read. On a plain table it runs on the pool that keeps statements prepared, whose
   * sessions have row-level security off; a refusal there (42501) may be a policy added since the
   * lookup, so the read runs once more the way any other table's does, where a policy applies and
   * a refused privilege is NOT_FOUND.
   */
  private <S, T> Future<T> run(CallerDb db, ToolRequest request, Table table, String name,
      Function<SqlConnection, Future<S>> send, Function<S, Future<T>> then) {
    if (!table.readRunsNoUserCode()) {
      return run(db, request, table, name, false, send, then);
    }
    return run(db, request, table, name, true, send, then).recover(err -> refused(err)
        ? run(db, request, table, name, false, send, then) : Future.failedFuture(err));
  }

  private static boolean refused(Throwable err) {
    return SqlStates.is(err, SqlStates.INSUFFICIENT_PRIVILEGE);
  }

  private <S, T> Future<T> run(CallerDb db, ToolRequest request, Table table, String name, boolean plain,
      Function<SqlConnection, Future<S>> send, Function<S, Future<T>> then) {
    return CallerSessions.readOnly(db, plain ? db.preparing() : db.pool(), request, timeoutMs, !plain,
        conn -> (plain ? Future.<Void>succeededFuture() : guarded(table)).compose(checked -> {
      Future<RowSet<Row>> readable = conn.preparedQuery(READABLE).execute(Tuple.of(table.oid()));
      Future<S> sent = send.apply(conn);
      return readable.compose(r -> {
        Boolean may = r.iterator().next().getBoolean(0);
        if (may == null) {
          return Future.failedFuture(new ShapeChanged());
        }
        return may ? sent.compose(then) : Future.failedFuture(TableCatalog.notFound(name, schemas));
      });
    }));
  }

  /**
   * Refuses a read of a relation whose query or policies reach a function the function check
   * refuses (the plain path, with row-level security off, runs no code of anyone's). A relation
   * found harmless before completes at once, so the statements that follow still go out together.
   */
  public Future<Void> guarded(Table table) {
    return functions == null ? Future.succeededFuture()
        : functions.check(FunctionGuard.Reach.reading(table.schema(), table.name()), ErrorCode.PERMISSION_DENIED, "table");
  }

  private Entry fresh(String name) {
    if (ttlNanos == 0) {
      return null;
    }
    Entry e = entries.get(name);
    if (e == null || System.nanoTime() - e.loadedAtNanos() > ttlNanos || e.shape().failed()) {
      return null;
    }
    return e;
  }

  private Entry load(String name) {
    long started = generation.get();
    Entry e = new Entry(TableCatalog.shape(pool, schemas, name), System.nanoTime());
    if (ttlNanos > 0) {
      // a lookup that fails (no such table) is not kept: the table may be created at any moment;
      // nor is one that began before a schema change cleared the cache, since it may have read the old shape
      e.shape().onSuccess(t -> {
        if (generation.get() == started) {
          entries.put(name, e);
        }
      });
    }
    return e;
  }

  private static boolean shapeChanged(Throwable err) {
    if (err instanceof ShapeChanged) {
      return true;
    }
    if (err instanceof PgException pg) {
      return SHAPE_CHANGED.contains(pg.getSqlState());
    }
    // a column the caller named that the cached shape lacks may have been added since
    return err instanceof ToolException te && te.code() == ErrorCode.INVALID_ARGUMENTS
        && te.details() != null && te.details().containsKey("column");
  }
}
