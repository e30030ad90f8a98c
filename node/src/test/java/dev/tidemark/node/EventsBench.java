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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/events.sh runs it): events delivered and
 * acknowledged per second by 1 and by 4 workers of one consumer, each worker a loop of
 * events_next (max 100, or -Dbench.max) and events_ack over HTTP, draining changes committed before it starts;
 * the lease round trip (events_next that returns events, then its events_ack and events_nack) p50
 * and p99; and each worker's first lease, from the start to its first events_next that returned
 * events. With -Dbench.nack-every=N, the first delivery of every Nth change is handed back with
 * events_nack, so that it comes again, and acknowledged on its next delivery.
 */
@ExtendWith(InfraExtension.class)
class EventsBench {

  static final String DB = "bench_events";
  static final String NAME = "benche";

  @Test
  void measure(SharedInfra infra) throws Exception {
    int changes = Integer.getInteger("bench.changes", 20_000);
    int nackEvery = Integer.getInteger("bench.nack-every", 0);
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
        Run run = new Run(changes, nackEvery);
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        // a thread per worker: the common pool runs only as many blocking loops at once as the machine has cores
        ExecutorService threads = Executors.newFixedThreadPool(workers);
        for (int w = 0; w < workers; w++) {
          loops.add(CompletableFuture.runAsync(() -> work(node, consumer, run), threads));
        }
        CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
        threads.shutdown();
        // the clock stops at the ack that finished the backlog, not when the other workers' waits ran out
        double seconds = (run.finished - run.started) / 1e9;
        long[] ms = run.rounds.stream().mapToLong(Long::longValue).sorted().toArray();
        long[] first = run.firstLeases.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf("[bench] events, %d worker(s), %d changes, max %d, %s: %.0f events/s delivered and acked in %.2f s;"
            + " first lease after %.1f ms (the last of the %d workers that had one, after %.1f ms); lease round trip (next with events, then ack%s)"
            + " p50 %.1f ms, p99 %.1f ms over %d leases; %d redeliveries%n", workers, run.acked.size(), max(),
            nackEvery == 0 ? "no nacks" : "one in " + nackEvery + " nacked once", run.acked.size() / seconds, seconds,
            first[0] / 1e6, first.length, first[first.length - 1] / 1e6, nackEvery == 0 ? "" : " and nack", ms[ms.length / 2] / 1e6,
            ms[(int) Math.ceil(ms.length * 0.99) - 1] / 1e6, ms.length, run.redelivered.get());
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

  private static int max() {
    return Integer.getInteger("bench.max", 100);
  }

  private static JsonObject args(String consumer) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add("bench_events")).put("max", max());
  }

  /** What the workers of one run share. */
  private static final class Run {
    final int changes;
    final int nackEvery;
    final Set<String> acked = ConcurrentHashMap.newKeySet();
    final ConcurrentLinkedQueue<Long> rounds = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Long> firstLeases = new ConcurrentLinkedQueue<>();
    final AtomicInteger redelivered = new AtomicInteger();
    final long started = System.nanoTime();
    volatile long finished;

    Run(int changes, int nackEvery) {
      this.changes = changes;
      this.nackEvery = nackEvery;
    }

    /** Whether this delivery is handed back: the first of every nackEvery-th change (by its position). */
    boolean nacks(JsonObject event) {
      String id = event.getString("event_id");
      return nackEvery > 0 && event.getInteger("delivery_count") == 1
          && Long.parseLong(id.substring(id.indexOf('-') + 1)) % nackEvery == 0;
    }

    synchronized void acked(JsonArray ids) {
      ids.forEach(id -> acked.add((String) id));
      if (finished == 0 && acked.size() >= changes) {
        finished = System.nanoTime();
      }
    }
  }

  private static void work(TidemarkNode node, String consumer, Run run) {
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      c.initialize();
      boolean first = true;
      while (run.acked.size() < run.changes) {
        long began = System.nanoTime();
        JsonObject leased = c.callTool("events_next", args(consumer).put("wait_ms", 500)).getJsonObject("structuredContent");
        JsonArray events = leased.getJsonArray("events");
        if (events == null || events.isEmpty()) {
          continue;
        }
        if (first) {
          run.firstLeases.add(System.nanoTime() - run.started);
          first = false;
        }
        String token = events.getJsonObject(0).getString("lease_token");
        JsonArray ids = new JsonArray();
        JsonArray nacked = new JsonArray();
        for (Object o : events) {
          JsonObject e = (JsonObject) o;
          (run.nacks(e) ? nacked : ids).add(e.getString("event_id"));
          if (e.getInteger("delivery_count") > 1) {
            run.redelivered.incrementAndGet();
          }
        }
        JsonObject ack = ids.isEmpty() ? new JsonObject() : c.callTool("events_ack",
            new JsonObject().put("consumer", consumer).put("event_ids", ids).put("lease_token", token));
        if (!nacked.isEmpty()) {
          ToolResults.ok(c, "events_nack", new JsonObject().put("consumer", consumer).put("event_ids", nacked).put("lease_token", token));
        }
        run.rounds.add(System.nanoTime() - began);
        if (!ids.isEmpty() && !Boolean.TRUE.equals(ack.getBoolean("isError"))) {
          run.acked(ids);
        }
      }
    }
  }
}
