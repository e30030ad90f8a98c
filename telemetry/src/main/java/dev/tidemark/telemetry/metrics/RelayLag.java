package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How far the changelog's publication to Kafka trails the commits it captured. The role that
 * publishes reports each measure; the gauges show the last one. A node that never publishes shows
 * no relay gauges at all, so that a dashboard's sum over nodes counts the publishing relay alone.
 */
public final class RelayLag {

  private final MeterRegistry registry;
  private final AtomicLong changes = new AtomicLong();
  private final AtomicLong millis = new AtomicLong();
  private volatile boolean registered;

  RelayLag(MeterRegistry registry) {
    this.registry = registry;
  }

  /**
   * @param waiting changes committed and not yet published
   * @param oldestAgeMillis age of the oldest of them, 0 when none waits
   */
  public void report(long waiting, long oldestAgeMillis) {
    changes.set(Math.max(0, waiting));
    millis.set(Math.max(0, oldestAgeMillis));
    if (!registered) {
      registered = true;
      Gauge.builder(Meters.RELAY_LAG_CHANGES, changes, AtomicLong::get)
          .description("Changes captured but not yet published to Kafka").register(registry);
      Gauge.builder(Meters.RELAY_LAG_SECONDS, millis, m -> m.get() / 1000.0).baseUnit("seconds")
          .description("Age of the oldest change not yet published to Kafka").register(registry);
    }
  }
}
