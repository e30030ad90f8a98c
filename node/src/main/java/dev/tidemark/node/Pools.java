package dev.tidemark.node;

import dev.tidemark.contract.config.TidemarkConfig.DatabaseConfig;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

/** Connection pools to a served database, built from its config in one place. */
public final class Pools {

  private Pools() {}

  public static Pool create(Vertx vertx, DatabaseConfig db) {
    PgConnectOptions connect = new PgConnectOptions()
        .setHost(db.host())
        .setPort(db.port())
        .setDatabase(db.dbname())
        .setUser(db.user())
        .setPassword(db.password())
        .addProperty("application_name", "tidemark");
    return PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(db.poolSize()))
        .connectingTo(connect)
        .using(vertx)
        .build();
  }
}
