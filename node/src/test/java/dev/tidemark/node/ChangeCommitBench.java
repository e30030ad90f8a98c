package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/change-commit.sh runs it): commits per
 * second and p50/p99 of single-row insert_rows with idempotency keys at a concurrency, through
 * MCP over HTTP on one gateway+command node, beside pgbench running the same INSERT directly.
 */
@ExtendWith(InfraExtension.class)
class ChangeCommitBench {

  static final String DB = "bench_change";

  @Test
  void measure(SharedInfra infra) throws Exception {
    int concurrency = Integer.getInteger("bench.concurrency", 16);
    int seconds = Integer.getInteger("bench.seconds", 10);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.bench_insert",
        "CREATE TABLE public.bench_insert (id bigserial PRIMARY KEY, v int NOT NULL)",
        "GRANT SELECT, INSERT ON public.bench_insert TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,command", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DB),
        ConfigKey.DATABASE_POOL_SIZE, String.valueOf(concurrency),
        // one token drives the run: it may take the whole pool it measures (docs/security.md)
        ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "100",
        ConfigKey.NODE_COMMAND_INSTANCES, System.getProperty("bench.instances", "0"),
        ConfigKey.COMMAND_DIRECT_COMMIT_ROLES, "tidemark_writer"));
    try {
      // unreported: the JIT compiles the commit path first (C2 took half a core through the first
      // measure without this), and the idempotency table reaches a size that no longer changes its plans
      int warmup = Integer.getInteger("bench.warmup", 15);
      if (warmup > 0) {
        overBus(node, concurrency, warmup);
        run(node, concurrency, Math.max(1, warmup / 3), true);
      }
      report("insert_rows, direct commit, command service over the event bus (no HTTP)", overBus(node, concurrency, seconds));
      report("insert_rows, direct commit (1 call)", run(node, concurrency, seconds, false));
      report("insert_rows, plan + commit (2 calls)", run(node, concurrency, seconds, true));
    } finally {
      TestNodes.stop(node);
    }
    report("pgbench, the same INSERT", pgbench(infra, concurrency, seconds));
  }

  private record Result(int count, double seconds, long[] latenciesMicros) {}

  private static Result run(TidemarkNode node, int concurrency, int seconds, boolean planFirst) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    CountDownLatch ready = new CountDownLatch(concurrency);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<List<Long>>> futures = new ArrayList<>();
    long[] window = new long[2];
    for (int t = 0; t < concurrency; t++) {
      int thread = t;
      futures.add(pool.submit(() -> {
        List<Long> latencies = new ArrayList<>();
        try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
          c.initialize();
          ready.countDown();
          go.await();
          long end = window[1];
          for (int i = 0; System.nanoTime() < end; i++) {
            JsonObject args = new JsonObject().put("table", "bench_insert").put("rows", new JsonArray().add(new JsonObject().put("v", i)));
            long start = System.nanoTime();
            if (planFirst) {
              String planId = c.callTool("insert_rows", args).getJsonObject("structuredContent").getString("plan_id");
              args.put("plan_id", planId);
            }
            JsonObject result = c.callTool("insert_rows", args.put("idempotency_key", "b" + planFirst + "-" + thread + "-" + i));
            if (result.getValue("isError") != null) {
              throw new IllegalStateException(result.encode());
            }
            latencies.add((System.nanoTime() - start) / 1000);
          }
        }
        return latencies;
      }));
    }
    ready.await(60, TimeUnit.SECONDS);
    window[0] = System.nanoTime();
    window[1] = window[0] + seconds * 1_000_000_000L;
    go.countDown();
    List<Long> all = new ArrayList<>();
    for (Future<List<Long>> f : futures) {
      all.addAll(f.get(seconds + 120L, TimeUnit.SECONDS));
    }
    double took = (System.nanoTime() - window[0]) / 1e9;
    pool.shutdownNow();
    return new Result(all.size(), took, all.stream().mapToLong(Long::longValue).toArray());
  }

  /** The command service alone: requests sent on the node's own event bus, as a gateway sends them. */
  private static Result overBus(TidemarkNode node, int concurrency, int seconds) throws Exception {
    dev.tidemark.contract.Caller caller = new dev.tidemark.contract.Caller("bench", "bench", "tidemark_writer",
        dev.tidemark.contract.Access.READ_WRITE, List.of("*"));
    String address = dev.tidemark.contract.Addresses.command(node.config().database().name());
    io.vertx.core.eventbus.DeliveryOptions options = new io.vertx.core.eventbus.DeliveryOptions()
        .addHeader(dev.tidemark.contract.Addresses.ACTION_HEADER, dev.tidemark.contract.Actions.TOOL_CALL).setSendTimeout(30_000);
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    long started = System.nanoTime();
    List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
    java.util.concurrent.atomic.AtomicInteger seq = new java.util.concurrent.atomic.AtomicInteger();
    CountDownLatch done = new CountDownLatch(concurrency);
    for (int t = 0; t < concurrency; t++) {
      Runnable[] loop = new Runnable[1];
      loop[0] = () -> {
        if (System.nanoTime() >= end) {
          done.countDown();
          return;
        }
        int i = seq.incrementAndGet();
        JsonObject args = new JsonObject().put("table", "bench_insert").put("rows", new JsonArray().add(new JsonObject().put("v", i)))
            .put("idempotency_key", "bus-" + i);
        dev.tidemark.contract.ToolRequest request = new dev.tidemark.contract.ToolRequest("r" + i, "main", "insert_rows", args, caller);
        long start = System.nanoTime();
        node.vertx().eventBus().<JsonObject>request(address, request.toJson(), options).onComplete(ar -> {
          if (ar.failed() || ar.result().body().containsKey("error")) {
            throw new IllegalStateException(ar.failed() ? ar.cause().toString() : ar.result().body().encode());
          }
          latencies.add((System.nanoTime() - start) / 1000);
          loop[0].run();
        });
      };
      node.vertx().runOnContext(v -> loop[0].run());
    }
    done.await(seconds + 60L, TimeUnit.SECONDS);
    double took = (System.nanoTime() - started) / 1e9;
    return new Result(latencies.size(), took, latencies.stream().mapToLong(Long::longValue).toArray());
  }

  private static Result pgbench(SharedInfra infra, int concurrency, int seconds) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("pgbench");
    Path script = dir.resolve("insert.sql");
    Files.writeString(script, "INSERT INTO public.bench_insert (v) VALUES (1);\n");
    String url = infra.postgres().url(DB).replace("postgresql://", "postgresql://" + infra.postgres().user() + ":"
        + infra.postgres().password() + "@");
    Process p = new ProcessBuilder("pgbench", "-n", "-c", String.valueOf(concurrency), "-j", "2", "-T", String.valueOf(seconds),
        "-f", script.toString(), "-l", "--log-prefix=" + dir.resolve("log"), url)
        .directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException("pgbench failed: " + out);
    }
    List<Long> latencies = new ArrayList<>();
    try (Stream<Path> logs = Files.list(dir)) {
      for (Path log : logs.filter(f -> f.getFileName().toString().startsWith("log")).toList()) {
        for (String line : Files.readAllLines(log)) {
          latencies.add(Long.parseLong(line.split(" ")[2]));
        }
      }
    }
    return new Result(latencies.size(), seconds, latencies.stream().mapToLong(Long::longValue).toArray());
  }

  private static void report(String what, Result r) {
    long[] sorted = r.latenciesMicros().clone();
    Arrays.sort(sorted);
    System.out.printf("[bench] %s: %d commits in %.1f s = %.0f/s, p50 %.2f ms, p99 %.2f ms%n", what, r.count(), r.seconds(),
        r.count() / r.seconds(), percentile(sorted, 0.50) / 1000.0, percentile(sorted, 0.99) / 1000.0);
  }

  private static long percentile(long[] sorted, double q) {
    return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.floor(q * sorted.length))];
  }
}
