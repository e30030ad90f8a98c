package dev.tidemark.node.migrate;

import dev.tidemark.database.schema.Migrator;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(InfraExtension.class)
class MigratorIT {

  private static Pool pool(Vertx vertx, SharedInfra infra, String db) {
    return PgBuilder.pool().with(new PoolOptions().setMaxSize(2))
        .connectingTo(new PgConnectOptions().setHost("127.0.0.1").setPort(infra.postgres().port()).setDatabase(db)
            .setUser(infra.postgres().user()).setPassword(infra.postgres().password()))
        .using(vertx).build();
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  @Test
  void migrationsApplyOnceEvenWhenTwoNodesStartTogether(SharedInfra infra) throws Exception {
    infra.postgres().createDatabaseIfMissing("tidemark_migrate_it");
    Vertx vertx = Vertx.vertx();
    try {
      Pool a = pool(vertx, infra, "tidemark_migrate_it");
      Pool b = pool(vertx, infra, "tidemark_migrate_it");
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
