package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/events.sh runs it): events delivered and
 * acknowledged per second by 1 and by 4 workers of one consumer, each worker a loop of
 * events_next (max 100, or -Dbench.max) and events_ack over HTTP, draining changes committed before it starts;
 * and the lease round trip (events_next that returns events, then its events_ack) p50 and p99.
 */
@ExtendWith(InfraExtension.class)
class EventsBench {

  static final String DB = "bench_events";
  static final String NAME = "benche";

  @Test
  void measure(SharedInfra infra) throws Exception {
    int changes = Integer.getInteger("bench.changes", 20_000);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.bench_events", "CREATE TABLE public.bench_events (id int PRIMARY KEY, v int)",
        "GRANT SELECT ON public.bench_events TO tidemark_reader");
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query,changelog",
        // one token drives the run: it may take the whole pool it measures (docs/security.md)
        Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DB), ConfigKey.DATABASE_NAME, NAME, ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "100"));
    try {
      for (int workers : new int[] {1, 4}) {
        String consumer = "bench-" + workers + "-" + System.nanoTime();
        try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
          c.initialize();
          ToolResults.ok(c, "events_next", args(consumer).put("wait_ms", 0)); // creates it: it receives what follows
        }
        int base = workers * 1_000_000;
        sql(infra, DB, "INSERT INTO public.bench_events SELECT g, 0 FROM generate_series(" + base + ", " + (base + changes - 1) + ") g");
        long writing = System.nanoTime();
        ChangelogFixtures.awaitDecoded(infra, DB);
        awaitPublished(infra);
        // the relay's own rate is bench/capture-bench.sh's drain; here the backlog is on the topic before the clock starts
        System.out.printf("[bench] relay: %d changes decoded, stored and published in %.1f s%n", changes,
            (System.nanoTime() - writing) / 1e9);
        Set<String> acked = ConcurrentHashMap.newKeySet();
        ConcurrentLinkedQueue<Long> rounds = new ConcurrentLinkedQueue<>();
        long started = System.nanoTime();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        // a thread per worker: the common pool runs only as many blocking loops at once as the machine has cores
        ExecutorService threads = Executors.newFixedThreadPool(workers);
        for (int w = 0; w < workers; w++) {
          loops.add(CompletableFuture.runAsync(() -> work(node, consumer, changes, acked, rounds), threads));
        }
        CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        threads.shutdown();
        double seconds = (System.nanoTime() - started) / 1e9;
        long[] ms = rounds.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf("[bench] events, %d worker(s), %d changes: %.0f events/s delivered and acked in %.1f s; lease round trip"
            + " (next with events, then ack) p50 %.1f ms, p99 %.1f ms over %d leases%n", workers, acked.size(), acked.size() / seconds,
            seconds, ms[ms.length / 2] / 1e6, ms[(int) Math.ceil(ms.length * 0.99) - 1] / 1e6, ms.length);
      }
    } finally {
      TestNodes.stop(node);
    }
  }

  /** Waits until the relay has published every change the changelog holds. */
  private static void awaitPublished(SharedInfra infra) {
    ChangelogFixtures.await("the relay to publish the backlog", java.time.Duration.ofMinutes(5), () -> "t".equals(
        ChangelogFixtures.strings(infra, DB, "SELECT (s.published_commit, s.published_change) >= coalesce((SELECT (k.position, c.id)"
            + " FROM tidemark.changelog_commit k JOIN tidemark.changelog c ON c.xid = k.xid ORDER BY k.position DESC, c.id DESC"
            + " LIMIT 1), (0, 0)) FROM tidemark.changelog_state s").get(0)));
  }

  private static JsonObject args(String consumer) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add("bench_events")).put("max", Integer.getInteger("bench.max", 100));
  }

  private static void work(TidemarkNode node, String consumer, int changes, Set<String> acked, ConcurrentLinkedQueue<Long> rounds) {
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      c.initialize();
      while (acked.size() < changes) {
        long began = System.nanoTime();
        JsonObject leased = c.callTool("events_next", args(consumer).put("wait_ms", 500)).getJsonObject("structuredContent");
        JsonArray events = leased.getJsonArray("events");
        if (events == null || events.isEmpty()) {
          continue;
        }
        JsonArray ids = new JsonArray();
        events.forEach(e -> ids.add(((JsonObject) e).getString("event_id")));
        JsonObject ack = c.callTool("events_ack", new JsonObject().put("consumer", consumer).put("event_ids", ids)
            .put("lease_token", events.getJsonObject(0).getString("lease_token")));
        rounds.add(System.nanoTime() - began);
        if (!Boolean.TRUE.equals(ack.getBoolean("isError"))) {
          ids.forEach(id -> acked.add((String) id));
        }
      }
    }
  }
}
