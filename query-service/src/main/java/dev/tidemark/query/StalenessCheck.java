package dev.tidemark.query;

import dev.tidemark.query.impl.ChangelogStaleness;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.util.Set;

/**
 * Decides whether a page cursor has gone stale: whether any table its statement reads has changed
 * since the first page. A cursor records the tables and the {@link #position()} at its first page;
 * the next page asks {@link #changedSince}. The changelog provides the real check ({@link #changelog}:
 * a change to one of the tables after the position, with no global counter every writer must
 * update); {@link #NEVER} reports nothing as changed, so {@code CURSOR_STALE} is never returned.
 */
public interface StalenessCheck {

  /** The check used until the changelog provides one: no cursor is ever stale. */
  StalenessCheck NEVER = new StalenessCheck() {
    @Override
    public Future<String> position() {
      return Future.succeededFuture("");
    }

    @Override
    public Future<Boolean> changedSince(Set<String> tables, String position) {
      return Future.succeededFuture(false);
    }
  };

  /** The check of a changelog stored in the served database, read through {@code pool}. */
  static StalenessCheck changelog(Pool pool) {
    return new ChangelogStaleness(pool, pool);
  }

  /**
   * The check of the changelog: the served database's WAL through {@code pool}, the changelog's
   * tables through {@code store} (database.changelog-url's database, or {@code pool} itself).
   */
  static StalenessCheck changelog(Pool pool, Pool store) {
    return new ChangelogStaleness(pool, store);
  }

  /** An opaque position in the change history (for example the changelog head), stored in a first page's cursor. */
  Future<String> position();

  /** Whether any of {@code tables} (each as schema.name) changed after {@code position}. */
  Future<Boolean> changedSince(Set<String> tables, String position);
}
