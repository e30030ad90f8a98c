package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/changelog-latency.sh runs it): measures
 * commit-to-local-bus latency on two gateway nodes at a steady rate, and relay throughput.
 */
@ExtendWith(InfraExtension.class)
class ChangelogLatencyBench {

  static final String DB = "bench_cl";
  static final String NAME = "bench";

  @Test
  void measure(SharedInfra infra) throws Exception {
    int rate = Integer.getInteger("bench.rate", 500);
    int seconds = Integer.getInteger("bench.seconds", 10);
    int burst = Integer.getInteger("bench.burst", 20_000);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.bench", "CREATE TABLE public.bench (id int PRIMARY KEY, v int)");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    TidemarkNode a = TestNodes.start(ChangelogFixtures.config(infra, DB, NAME, cluster, ports[0], members, "gateway,changelog"));
    TidemarkNode b = TestNodes.start(ChangelogFixtures.config(infra, DB, NAME, cluster, ports[1], members, "gateway"));
    try {
      int n = rate * seconds;
      long[] committed = new long[n + burst];
      long[] latencyA = new long[n];
      long[] latencyB = new long[n];
      CountDownLatch steady = new CountDownLatch(2 * n);
      CountDownLatch all = new CountDownLatch(burst);
      long[] burstDone = new long[1];
      Map<Integer, Boolean> seenB = new ConcurrentHashMap<>();
      a.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> {
        int id = ((JsonArray) ChangeNotice.fromJson(m.body()).key()).getInteger(0);
        if (id < n) {
          latencyA[id] = System.nanoTime() - committed[id];
          steady.countDown();
        }
      }).completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      b.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> {
        int id = ((JsonArray) ChangeNotice.fromJson(m.body()).key()).getInteger(0);
        if (id < n) {
          latencyB[id] = System.nanoTime() - committed[id];
          steady.countDown();
        } else if (seenB.putIfAbsent(id, true) == null) {
          all.countDown();
          if (all.getCount() == 0) {
            burstDone[0] = System.nanoTime();
          }
        }
      }).completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      try (Connection c = ChangelogFixtures.jdbc(infra, DB); var ps = c.prepareStatement("INSERT INTO public.bench VALUES (?, 0)")) {
        long start = System.nanoTime();
        long interval = 1_000_000_000L / rate;
        for (int i = 0; i < n; i++) {
          long due = start + i * interval;
          while (System.nanoTime() < due) {
            LockSupport.parkNanos(due - System.nanoTime());  // paces the writer; not a wait for a condition
          }
          ps.setInt(1, i);
          ps.executeUpdate();
          committed[i] = System.nanoTime();
        }
        if (!steady.await(60, TimeUnit.SECONDS)) {
          throw new AssertionError("not every change reached both nodes");
        }
        // throughput: many changes committed as fast as one writer can, in transactions of 100
        c.setAutoCommit(false);
        long burstStart = System.nanoTime();
        for (int i = 0; i < burst; i++) {
          ps.setInt(1, n + i);
          ps.executeUpdate();
          if (i % 100 == 99) {
            c.commit();
          }
        }
        c.commit();
        long writeDone = System.nanoTime();
        if (!all.await(120, TimeUnit.SECONDS)) {
          throw new AssertionError("the burst did not reach node B");
        }
        System.out.printf("[bench] steady %d changes/s for %d s, one change per commit, commit -> local bus:%n", rate, seconds);
        print("node A (runs the relay)", latencyA);
        print("node B", latencyB);
        System.out.printf("[bench] burst of %d changes (100 per commit): written in %d ms, on node B's bus after %d ms: %.0f changes/s end to end%n",
            burst, (writeDone - burstStart) / 1_000_000, (burstDone[0] - burstStart) / 1_000_000,
            burst * 1e9 / (burstDone[0] - burstStart));
      }
    } finally {
      TestNodes.stop(b);
      TestNodes.stop(a);
    }
  }

  private static void print(String node, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    System.out.printf("[bench]   %s: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", node,
        sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.99)] / 1e6, sorted[sorted.length - 1] / 1e6);
  }
}
