package dev.tidemark.query.impl;

import dev.tidemark.query.StalenessCheck;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Set;

/**
 * Page cursors go stale when the changelog shows a committed change to a table they read after
 * their first page. Positions are assigned at commit, in commit order, so "after the position"
 * is exact; no counter that every writer must update is involved. The first page reads the
 * position before its own snapshot, so a race can only make a cursor stale, never hide a change.
 */
public final class ChangelogStaleness implements StalenessCheck {

  private static final String HEAD = "SELECT coalesce(max(position), 0) FROM tidemark.changelog_commit";
  // a position older than what retention pruned cannot be checked: it counts as stale
  private static final String CHANGED = """
      SELECT (SELECT pruned_commit FROM tidemark.changelog_state) > $1
          OR EXISTS (SELECT 1
                       FROM tidemark.changelog_commit k
                       JOIN tidemark.changelog c ON c.xid = k.xid
                      WHERE k.position > $1
                        AND (c.schema_name || '.' || c.table_name) = ANY($2))""";

  private final Pool pool;

  public ChangelogStaleness(Pool pool) {
    this.pool = pool;
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
    return pool.preparedQuery(CHANGED).execute(Tuple.tuple().addLong(after).addArrayOfString(tables.toArray(new String[0])))
        .map(rows -> Boolean.TRUE.equals(rows.iterator().next().getBoolean(0)));
  }
}
