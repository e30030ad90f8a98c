package dev.tidemark.telemetry.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;

/**
 * The gauges a node's roles report into from several threads at once (event loops, Kafka
 * threads, probes of several databases): one gauge per label however many threads register it,
 * and counts that add up.
 */
class SharedGaugesTest {

  private static final int THREADS = 8;
  private static final int ROUNDS = 500;

  @Test
  void callersWaitingOnManyThreadsAddUpInOneGaugePerPool() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CallerPoolMeters meters = new CallerPoolMeters(registry);
    together(t -> {
      for (int i = 0; i < ROUNDS; i++) {
        meters.waiting("caller-" + (i % 2)).incrementAndGet();
        meters.refused("caller-" + (i % 2), "database.caller-share-percent");
      }
      for (int i = 0; i < ROUNDS / 2; i++) {
        meters.waiting("caller-0").decrementAndGet();
      }
    });
    assertEquals(2, registry.find(Meters.CALLER_POOL_WAITING).gauges().size());
    assertEquals(0.0, registry.get(Meters.CALLER_POOL_WAITING).tag("pool_name", "caller-0").gauge().value());
    assertEquals(THREADS * ROUNDS / 2.0, registry.get(Meters.CALLER_POOL_WAITING).tag("pool_name", "caller-1").gauge().value());
    assertEquals(THREADS * ROUNDS / 2.0, registry.get(Meters.CALLER_POOL_REFUSALS).tag("pool_name", "caller-1").counter().count());
  }

  @Test
  void eventsMetersOfManyDatabasesOnManyThreadsKeepOneGaugeEach() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    EventsMeters meters = new EventsMeters(registry);
    together(t -> {
      for (int i = 0; i < ROUNDS; i++) {
        meters.consumers("db" + (i % 3), 7);
        meters.shareConsumers("db" + (i % 3), 2);
        meters.removed("db0", "idle");
      }
    });
    assertEquals(3, registry.find(Meters.EVENTS_CONSUMERS).gauges().size());
    assertEquals(3, registry.find(Meters.EVENTS_SHARE_CONSUMERS).gauges().size());
    assertEquals(7.0, registry.get(Meters.EVENTS_CONSUMERS).tag("database", "db2").gauge().value());
    assertEquals((double) THREADS * ROUNDS, registry.get(Meters.EVENTS_CONSUMERS_REMOVED).tag("database", "db0").counter().count());
  }

  @Test
  void eachDatabasesProbeRemovesOnlyItsOwnGroupsThatAreGone() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    EventsLag lag = new EventsLag(registry);
    // a probe per database on a thread of its own, each reporting its groups, one of them only at first
    together(t -> {
      String db = "db" + t;
      lag.report(db, Map.of(db + "-kept", 5L, db + "-dropped", 3L));
      for (int i = 0; i < ROUNDS; i++) {
        lag.report(db, Map.of(db + "-kept", (long) i));
      }
    });
    assertEquals(THREADS, registry.find(Meters.EVENTS_CONSUMER_LAG).gauges().size(), "one gauge per kept group, none of the dropped");
    for (int t = 0; t < THREADS; t++) {
      assertEquals(ROUNDS - 1.0, registry.get(Meters.EVENTS_CONSUMER_LAG).tag("group", "db" + t + "-kept").gauge().value());
    }
    lag.report("db0", Map.of("db0-kept", -4L));
    assertEquals(0.0, registry.get(Meters.EVENTS_CONSUMER_LAG).tag("group", "db0-kept").gauge().value(), "a lag is never negative");
  }

  @Test
  void theRelaysGaugesAppearOnceOnItsFirstReportWhateverTheThreads() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RelayLag lag = new RelayLag(registry);
    assertTrue(registry.find(Meters.RELAY_LAG_CHANGES).gauges().isEmpty(), "a node that never publishes shows no relay gauge");
    together(t -> {
      for (int i = 0; i < ROUNDS; i++) {
        lag.report(12, 1_500);
      }
    });
    assertEquals(1, registry.find(Meters.RELAY_LAG_CHANGES).gauges().size());
    assertEquals(12.0, registry.get(Meters.RELAY_LAG_CHANGES).gauge().value());
    assertEquals(1.5, registry.get(Meters.RELAY_LAG_SECONDS).gauge().value());
    lag.report(-1, -1);
    assertEquals(0.0, registry.get(Meters.RELAY_LAG_CHANGES).gauge().value());
  }

  /** Runs {@code work} on {@link #THREADS} threads released at once, each given its index, and waits for all. */
  @Test
  void toolCallsEndedOnManyThreadsAddUpInOneSeriesPerToolAndOutcome() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ToolCallMeters meters = new ToolCallMeters(registry);
    JsonObject ok = new JsonObject().put("structuredContent", new JsonObject());
    JsonObject notFound = new JsonObject().put("isError", true)
        .put("structuredContent", new JsonObject().put("error", new JsonObject().put("code", "NOT_FOUND")));
    meters.record("list_rows", () -> io.vertx.core.Future.succeededFuture(notFound));
    assertTrue(registry.find(Meters.TOOL_CALLS).tags("tool", "list_rows", "outcome", "ok").counter() == null,
        "no ok series before a call ends so");
    together(t -> {
      for (int i = 0; i < ROUNDS; i++) {
        String tool = i % 2 == 0 ? "get_row" : "list_rows";
        JsonObject result = i % 5 == 0 ? notFound : ok;
        meters.record(tool, () -> io.vertx.core.Future.succeededFuture(result));
      }
    });
    assertEquals(1, registry.find(Meters.TOOL_CALLS).tags("tool", "get_row", "outcome", "ok").counters().size());
    double getRowOk = registry.get(Meters.TOOL_CALLS).tags("tool", "get_row", "outcome", "ok").counter().count();
    double getRowNotFound = registry.get(Meters.TOOL_CALLS).tags("tool", "get_row", "outcome", "NOT_FOUND").counter().count();
    double listRows = registry.get(Meters.TOOL_CALLS).tags("tool", "list_rows").counters().stream().mapToDouble(c -> c.count()).sum();
    assertEquals(THREADS * (ROUNDS / 2) * 4 / 5, (int) getRowOk);
    assertEquals(THREADS * (ROUNDS / 2) / 5, (int) getRowNotFound);
    assertEquals(THREADS * (ROUNDS / 2) + 1, (int) listRows);
    assertEquals(THREADS * (ROUNDS / 2), registry.get(Meters.TOOL_CALL_DURATION).tags("tool", "get_row").timer().count());
  }

  private static void together(IntConsumer work) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    try {
      for (int t = 0; t < THREADS; t++) {
        int index = t;
        done.add(pool.submit(() -> {
          start.await();
          work.accept(index);
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
