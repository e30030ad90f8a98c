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
    return create(vertx, db, false);
  }

  /**
   * A pool whose connections keep their statements prepared, for reads whose statements Tidemark
   * writes and which leave nothing behind on the session (so no {@code DISCARD ALL} follows them):
   * PostgreSQL then parses and plans each statement once per connection instead of once per call.
   */
  public static Pool createPreparing(Vertx vertx, DatabaseConfig db) {
    return create(vertx, db, true);
  }

  /** How Tidemark's own login connects to the served database, for a connection outside any pool (a LISTEN). */
  public static PgConnectOptions connectOptions(DatabaseConfig db) {
    return db.connectOptions(db.user(), db.password(), "tidemark");
  }

  private static Pool create(Vertx vertx, DatabaseConfig db, boolean keepPrepared) {
    // the name is the pool_name and namespace label of its metrics (docs/operations.md)
    String name = keepPrepared ? "tidemark-prepared" : "tidemark";
    PgConnectOptions connect = connectOptions(db).setCachePreparedStatements(keepPrepared);
    connect.setMetricsName(name);
    return PgBuilder.pool()
        .with(db.poolOptions(name))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }
}
