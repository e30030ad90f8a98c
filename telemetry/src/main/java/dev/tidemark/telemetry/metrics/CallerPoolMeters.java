package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the shares of the caller pools do on a node: calls waiting for a caller's turn, and calls
 * refused by the limit they met. Calls wait in front of a pool, not in it, so the pool's own
 * {@code vertx_pool_queue_pending} does not count them. Labelled by the pool's purpose, as the
 * pool meters are: every caller role and service instance of a node counts into one gauge.
 */
public final class CallerPoolMeters {

  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> waiting = new ConcurrentHashMap<>();

  CallerPoolMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The count of calls waiting for a turn of the pools named {@code poolName}, to add to and take from. */
  public AtomicInteger waiting(String poolName) {
    return waiting.computeIfAbsent(poolName, name -> {
      AtomicInteger value = new AtomicInteger();
      Gauge.builder(Meters.CALLER_POOL_WAITING, value, AtomicInteger::get).tag("pool_name", name)
          .description("Calls waiting for a caller's turn of a caller pool").register(registry);
      return value;
    });
  }

  /** A call of the pools named {@code poolName} refused at {@code limit} (the config key it met). */
  public void refused(String poolName, String limit) {
    Counter.builder(Meters.CALLER_POOL_REFUSALS).tag("pool_name", poolName).tag("limit", limit)
        .description("Calls that got no connection of a caller pool in time, by the limit they met").register(registry).increment();
  }
}
