package dev.tidemark.changelog;

import dev.tidemark.database.Pools;
import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.database.schema.Migrator;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A database on schema version 6 (capture triggers and the position lock) upgraded to logical
 * decoding while writers keep committing: every change appears in the changelog exactly once, the
 * ones the triggers captured before the switch and the ones decoded after it.
 */
@ExtendWith(InfraExtension.class)
class CaptureUpgradeIT {

  static final String DB = "capture_upgrade_it";

  @Test
  void anUpgradeFromTheCaptureTriggersWhileWritersCommitLosesNoChangeAndDoublesNone(SharedInfra infra) throws Exception {
    infra.postgres().createDatabaseIfMissing(DB);
    Vertx vertx = Vertx.vertx();
    ServiceHarness relay = null;
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      Map<ConfigKey, String> v = ServiceHarness.config(infra, "changelog");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
      Pool db = Pools.create(vertx, TidemarkConfig.from(v).database());
      assertEquals(List.of(1, 2, 3, 4, 5, 6), await(Migrator.migrate(db, 6)), "the old schema, with capture triggers");
      sql(infra, DB, "CREATE TABLE public.up (writer int, seq int, PRIMARY KEY (writer, seq))",
          "SELECT tidemark.capture_schemas(ARRAY['public'])");

      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger committed = new AtomicInteger();
      List<Future<Integer>> writers = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        int writer = w;
        writers.add(pool.submit(() -> {
          int seq = 0;
          try (Connection c = TestDatabases.jdbc(infra, DB); var ps = c.prepareStatement("INSERT INTO public.up VALUES (?, ?)")) {
            while (!stop.get()) {
              ps.setInt(1, writer);
              ps.setInt(2, seq++);
              ps.executeUpdate();
              committed.incrementAndGet();
            }
          }
          return seq;
        }));
      }
      Await.that("writes before the upgrade", java.time.Duration.ofSeconds(60), () -> committed.get() >= 400);
      assertEquals(List.of(7), await(Migrator.migrate(db, 7)), "the switch to logical decoding, while the writers commit");
      int atSwitch = committed.get();
      Await.that("writes after the upgrade", java.time.Duration.ofSeconds(60), () -> committed.get() >= atSwitch + 400);
      stop.set(true);
      int total = 0;
      for (Future<Integer> f : writers) {
        total += f.get(60, TimeUnit.SECONDS);
      }
      assertEquals(total, committed.get());

      // the harness brings the schema to its latest version before the relay starts, as an operator's migrate does
      relay = ChangelogRole.start(infra, DB, "upgrade", Map.of());
      TestDatabases.awaitDecoded(infra, DB);

      try (Connection c = TestDatabases.jdbc(infra, DB)) {
        ResultSet r = c.createStatement().executeQuery("SELECT count(*), count(DISTINCT c.key), "
            + "count(*) FILTER (WHERE k.position < (SELECT decoding_from FROM tidemark.changelog_state)), "
            + "(SELECT count(*) FROM public.up) FROM tidemark.changelog c JOIN tidemark.changelog_commit k ON k.xid = c.xid "
            + "WHERE c.table_name = 'up' AND c.op = 'INSERT'");
        r.next();
        assertEquals(total, r.getLong(4));
        assertEquals(total, r.getLong(1), "every committed insert is in the changelog");
        assertEquals(total, r.getLong(2), "each exactly once");
        long byTriggers = r.getLong(3);
        assertTrue(byTriggers >= 400 && byTriggers < total, "some were captured by the triggers, the rest decoded: " + byTriggers);
        ResultSet order = c.createStatement().executeQuery("SELECT (c.after->>'writer')::int, (c.after->>'seq')::int "
            + "FROM tidemark.changelog c JOIN tidemark.changelog_commit k ON k.xid = c.xid WHERE c.table_name = 'up' "
            + "ORDER BY k.position, c.id");
        int[] next = new int[4];
        while (order.next()) {
          assertEquals(next[order.getInt(1)]++, order.getInt(2), "each writer's changes in commit order across the switch");
        }
        ResultSet triggers = c.createStatement().executeQuery("SELECT count(*) FROM pg_trigger WHERE tgname = 'changelog_assign_position'");
        triggers.next();
        assertEquals(0, triggers.getLong(1), "no trigger in the commit path any more");
      }
    } finally {
      pool.shutdownNow();
      if (relay != null) {
        relay.close();
      }
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }
}
