package dev.tidemark.database.schema;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;

/**
 * The changelog's tables in a database of Tidemark's own (database.changelog-url): created by
 * {@code tidemark migrate} and by the relay at start, whichever comes first. The served database
 * keeps its own changelog tables from the migrations; they stay empty once the changelog moved.
 */
public final class ChangelogStore {

  /** Any fixed number, other than the migrations' lock: 'tmstore'. */
  private static final long LOCK_KEY = 0x746d_7374_6f72_6500L;

  private ChangelogStore() {}

  /** Creates what is missing of the store's tables; running it again changes nothing. */
  public static Future<Void> prepare(Pool store) {
    String schema = Migrator.read("store/changelog_store.sql");
    return store.withTransaction(conn -> conn.query("SELECT pg_advisory_xact_lock(" + LOCK_KEY + ")").execute()
        .compose(x -> conn.query(schema).execute())
        .mapEmpty());
  }

  /** Removes the changelog's tables from its own database (tidemark uninstall): schema tidemark there holds nothing else. */
  public static Future<Void> uninstall(Pool store) {
    return store.query("DROP SCHEMA IF EXISTS tidemark CASCADE").execute().mapEmpty();
  }
}
