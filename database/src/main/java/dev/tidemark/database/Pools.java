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
    String name = "tidemark";
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

  /** How Tidemark's own login connects to the served database, for a connection outside any pool (a LISTEN). */
  public static PgConnectOptions connectOptions(DatabaseConfig db) {
    return db.connectOptions(db.user(), db.password(), "tidemark");
  }

  /** A select list with a star: {@code SELECT *} or {@code t.*}. */
  static final java.util.regex.Pattern STAR_RESULT = java.util.regex.Pattern.compile("(?i)\\bselect\\s+\\*|\\w\\.\\*");
}
