package dev.tidemark.database;

import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;

/** Connection pools to a served database, built from its config in one place. */
public final class Pools {

  private Pools() {}

  public static Pool create(Vertx vertx, DatabaseConfig db) {
    // the name is the pool_name and namespace label of its metrics (docs/operations.md)
    return build(vertx, db, "tidemark");
  }

  private static Pool build(Vertx vertx, DatabaseConfig db, String name) {
    // Tidemark's own statements are parsed and planned once per connection, not once per call: the
    // idempotency lookup of every commit spent more on planning than on running. A statement whose
    // result is a star over a table is left out, since PostgreSQL refuses a kept statement whose
    // result columns changed (a migration that adds a column to one of Tidemark's tables).
    PgConnectOptions connect = connectOptions(db).setCachePreparedStatements(true)
        .setPreparedStatementCacheSqlFilter(sql -> !STAR_RESULT.matcher(sql).find());
    connect.setMetricsName(name);
    return PgBuilder.pool()
        .with(db.poolOptions(name))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }

  /**
   * Tidemark's login on the database the changelog is stored in (database.changelog-url): {@code
   * served} itself when the changelog stays in the served database, otherwise a pool of its own,
   * which its caller closes with {@link #closeChangelog}.
   */
  public static Pool changelog(Vertx vertx, DatabaseConfig db, Pool served) {
    if (!db.separateChangelog()) {
      return served;
    }
    return build(vertx, db.changelogDatabase(), "tidemark-changelog");
  }

  /** Closes a pool of {@link #changelog} unless it is the served database's own. */
  public static io.vertx.core.Future<Void> closeChangelog(Pool changelog, Pool served) {
    return changelog == served ? io.vertx.core.Future.succeededFuture() : changelog.close();
  }

  /** How Tidemark's own login connects to the served database, for a connection outside any pool (a LISTEN). */
  public static PgConnectOptions connectOptions(DatabaseConfig db) {
    return db.connectOptions(db.user(), db.password(), "tidemark");
  }

  /** A select list with a star: {@code SELECT *} or {@code t.*}. */
  static final java.util.regex.Pattern STAR_RESULT = java.util.regex.Pattern.compile("(?i)\\bselect\\s+\\*|\\w\\.\\*");
}
