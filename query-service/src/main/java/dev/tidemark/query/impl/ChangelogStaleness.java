package dev.tidemark.query.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.query.StalenessCheck;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Set;

/**
 * Page cursors go stale when the changelog shows a committed change to a table they read after
 * their first page. A first page records the WAL position before its own snapshot; a change is
 * after it when its commit LSN (its changelog position) is. The changelog is written by the relay
 * from the replication slot, so it lags the commits: a later page first emits a fence (a
 * non-transactional logical message, whose LSN is after every commit its snapshot can see) and
 * waits until the relay has stored everything before the fence, then looks. When no relay streams
 * the slot it looks at once; when the relay does not get there in time, the cursor counts as stale.
 * A race can only make a cursor stale, never hide a change.
 */
public final class ChangelogStaleness implements StalenessCheck {

  /** How long a page waits for the relay to reach its fence before it calls its cursor stale. */
  static final long FENCE_WAIT_MS = 5_000;
  static final long FENCE_POLL_MS = 10;

  private static final String HEAD = "SELECT (pg_current_wal_lsn() - '0/0')::bigint";
  // PostgreSQL 17 can flush the fence at once; before, the WAL writer flushes it within wal_writer_delay
  private static final String FENCE = """
      SELECT (pg_logical_emit_message(false, 'tidemark.fence', '', true) - '0/0')::bigint AS fence,
             coalesce((SELECT bool_or(active) FROM pg_replication_slots
                        WHERE database = current_database() AND slot_name LIKE 'tidemark\\_%'), false) AS streamed""";
  private static final String REACHED = "SELECT decoded_lsn >= $1 FROM tidemark.changelog_state";
  // a position older than what retention pruned cannot be checked: it counts as stale
  private static final String CHANGED = """
      SELECT (SELECT pruned_commit FROM tidemark.changelog_state) > $1
          OR EXISTS (SELECT 1
                       FROM tidemark.changelog_commit k
                       JOIN tidemark.changelog c ON c.xid = k.xid
                      WHERE k.position > $1
                        AND (c.schema_name || '.' || c.table_name) = ANY($2))""";

  private static final String FENCE_BEFORE_17 = FENCE.replace("'', true)", "'')");

  private final Pool pool;
  private final Pool store;
  private volatile boolean flushArgument = true;

  /**
   * @param pool Tidemark's login on the served database: the WAL position and the fence
   * @param store its login on the database the changelog is stored in: how far it got, and what changed
   */
  public ChangelogStaleness(Pool pool, Pool store) {
    this.pool = pool;
    this.store = store;
  }

  @Override
  public Future<String> position() {
    return pool.query(HEAD).execute().map(rows -> String.valueOf(rows.iterator().next().getLong(0)));
  }

  @Override
  public Future<Boolean> changedSince(Set<String> tables, String position) {
    long after;
    try {
      after = Long.parseLong(position);
    } catch (NumberFormatException e) {
      return Future.succeededFuture(true); // a cursor from before the changelog: start again
    }
    return fence()
        .compose(rows -> {
          var r = rows.iterator().next();
          if (!Boolean.TRUE.equals(r.getBoolean("streamed"))) {
            return Future.succeededFuture(true);
          }
          return waitFor(r.getLong("fence"), System.currentTimeMillis() + FENCE_WAIT_MS);
        })
        .compose(reached -> !reached ? Future.succeededFuture(true)
            : store.preparedQuery(CHANGED).execute(Tuple.tuple().addLong(after).addArrayOfString(tables.toArray(new String[0])))
                .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0))));
  }

  /**
   * A fence's position: every transaction committed before this call is at a lower position, so
   * once {@code decoded_lsn} reaches it the changelog holds them all (while no relay streams the
   * slot, it is not reached).
   */
  public Future<Long> horizon() {
    return fence().map(rows -> rows.iterator().next().getLong("fence"));
  }

  private Future<io.vertx.sqlclient.RowSet<io.vertx.sqlclient.Row>> fence() {
    if (!flushArgument) {
      return pool.query(FENCE_BEFORE_17).execute();
    }
    return pool.query(FENCE).execute().recover(err -> {
      if (SqlStates.is(err, SqlStates.UNDEFINED_FUNCTION)) {
        flushArgument = false;
        return pool.query(FENCE_BEFORE_17).execute();
      }
      return Future.failedFuture(err);
    });
  }

  /** True once the relay stored everything before {@code fence}; false at the deadline. */
  private Future<Boolean> waitFor(long fence, long deadline) {
    return store.preparedQuery(REACHED).execute(Tuple.of(fence)).compose(rows -> {
      if (Boolean.TRUE.equals(rows.iterator().next().getBoolean(0))) {
        return Future.succeededFuture(true);
      }
      Context ctx = Vertx.currentContext();
      if (ctx == null || System.currentTimeMillis() > deadline) {
        return Future.succeededFuture(false);
      }
      Promise<Boolean> next = Promise.promise();
      ctx.owner().setTimer(FENCE_POLL_MS, t -> waitFor(fence, deadline).onComplete(next));
      return next.future();
    });
  }
}
