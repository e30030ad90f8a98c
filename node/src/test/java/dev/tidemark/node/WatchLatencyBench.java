package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/watch-latency.sh runs it): commit-to-patch
 * latency of a watch that long-polls with wait_ms, for rows committed by plain JDBC at a steady
 * rate, one row per commit. The latency of a row is from its commit returning to the watch call
 * returning the patch that holds it.
 */
@ExtendWith(InfraExtension.class)
class WatchLatencyBench {

  static final String DB = "bench_watch";
  static final String NAME = "benchw";

  @Test
  void measure(SharedInfra infra) throws Exception {
    int rate = Integer.getInteger("bench.rate", 50);
    int seconds = Integer.getInteger("bench.seconds", 10);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.bench_watch", "CREATE TABLE public.bench_watch (id int PRIMARY KEY, v int)",
        "GRANT SELECT ON public.bench_watch TO tidemark_reader");
    TidemarkNode relay = ChangelogFixtures.startRelay(infra, DB, NAME, Map.of());
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query",
        Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DB), ConfigKey.DATABASE_NAME, NAME));
    int n = rate * seconds;
    long[] committed = new long[n];
    long[] patched = new long[n];
    AtomicBoolean done = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicLong calls = new java.util.concurrent.atomic.AtomicLong();
    java.util.concurrent.atomic.AtomicLong callNanos = new java.util.concurrent.atomic.AtomicLong();
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      JsonObject args = new JsonObject().put("table", "bench_watch");
      String[] cursor = {ToolResults.ok(client, "watch", args).getString("cursor")};
      ChangelogFixtures.awaitDecoded(infra, DB);
      CompletableFuture<Void> watcher = CompletableFuture.runAsync(() -> {
        while (!done.get()) {
          long began = System.nanoTime();
          JsonObject s = client.callTool("watch", args.copy().put("cursor", cursor[0]).put("wait_ms", 30_000))
              .getJsonObject("structuredContent");
          long now = System.nanoTime();
          calls.incrementAndGet();
          callNanos.addAndGet(now - began);
          if ("patch".equals(s.getString("kind"))) {
            s.getJsonArray("changes").forEach(o -> {
              int id = ((JsonObject) o).getJsonArray("key").getInteger(0);
              if (id < n && patched[id] == 0) {
                patched[id] = now;
              }
            });
          }
          cursor[0] = s.getString("cursor");
        }
      });
      try (Connection c = ChangelogFixtures.jdbc(infra, DB); var st = c.prepareStatement("INSERT INTO public.bench_watch VALUES (?, 0)")) {
        // PostgreSQL's default, which the embedded server turns off: each commit flushes its WAL,
        // so decoding sees it at once, as it does on a production database
        try (var set = c.createStatement()) {
          set.execute("SET synchronous_commit = on");
        }
        long interval = 1_000_000_000L / rate;
        long next = System.nanoTime();
        for (int i = 0; i < n; i++) {
          LockSupport.parkNanos(next - System.nanoTime());
          st.setInt(1, i);
          st.executeUpdate();
          committed[i] = System.nanoTime();
          next += interval;
        }
      }
      ChangelogFixtures.await("every row in a patch", java.time.Duration.ofSeconds(60), () -> Arrays.stream(patched).allMatch(t -> t != 0));
      done.set(true);
      sql(infra, DB, "INSERT INTO public.bench_watch VALUES (" + (n + 1) + ", 0)");  // ends the last long poll
      watcher.get(60, TimeUnit.SECONDS);
    } finally {
      TestNodes.stop(node);
      TestNodes.stop(relay);
    }
    double[] ms = new double[n];
    for (int i = 0; i < n; i++) {
      ms[i] = (patched[i] - committed[i]) / 1e6;
    }
    Arrays.sort(ms);
    System.out.printf("[bench] watch commit->patch, %d rows at %d/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d calls, %.1f ms each on average%n",
        n, rate, ms[n / 2], ms[(int) Math.ceil(n * 0.99) - 1], ms[n - 1], calls.get(), callNanos.get() / 1e6 / Math.max(1, calls.get()));
  }
}
