package dev.tidemark.database.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.devstack.EmbeddedPostgresServer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class MigratorIT {

  // a server of its own: the suite's shared one is started by test-support, which depends on this module
  private static EmbeddedPostgresServer postgres;

  @BeforeAll
  static void start() {
    postgres = EmbeddedPostgresServer.start(null);
  }

  @AfterAll
  static void stop() {
    if (postgres != null) {
      postgres.close();
    }
  }

  private static Pool pool(Vertx vertx, String db) {
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(2))
        .connectingTo(new PgConnectOptions().setHost("127.0.0.1").setPort(postgres.port()).setDatabase(db)
            .setUser(postgres.user()).setPassword(postgres.password()))
        .using(vertx).build();
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  void migrationsApplyOnceEvenWhenTwoNodesStartTogether() throws Exception {
    postgres.createDatabaseIfMissing("tidemark_migrate_it");
    Vertx vertx = Vertx.vertx();
    try {
      Pool a = pool(vertx, "tidemark_migrate_it");
      Pool b = pool(vertx, "tidemark_migrate_it");
      Future<List<Integer>> first = Migrator.migrate(a);
      Future<List<Integer>> second = Migrator.migrate(b);
      await(Future.all(first, second));
      List<Integer> applied = new java.util.ArrayList<>(first.result());
      applied.addAll(second.result());
      assertEquals(java.util.stream.IntStream.rangeClosed(1, Migrator.latestVersion()).boxed().toList(), applied.stream().sorted().toList(),
          "each version applied by exactly one of them");
      assertEquals(List.of(), await(Migrator.migrate(a)), "running it again changes nothing");
      long versions = await(a.query("SELECT count(*) FROM tidemark.schema_version").execute()).iterator().next().getLong(0);
      assertEquals(Migrator.latestVersion(), versions);
      boolean roles = await(a.query("SELECT count(*) = 2 FROM pg_roles WHERE rolname IN ('tidemark_reader', 'tidemark_writer')").execute())
          .iterator().next().getBoolean(0);
      assertTrue(roles);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
