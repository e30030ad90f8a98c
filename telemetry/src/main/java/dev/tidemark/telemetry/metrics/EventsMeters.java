package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the events consumers of each database cost a node: how many consumers exist (each a share
 * group, and a dead-letter topic where the broker has them), how many share consumers this node
 * holds open (two threads and a broker connection each), how many consumers were removed, and how
 * many creations a quota refused. Labelled by database only: a consumer's name is its owner's.
 */
public final class EventsMeters {

  private final MeterRegistry registry;
  private final Map<String, AtomicLong> consumers = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> shareConsumers = new ConcurrentHashMap<>();

  EventsMeters(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The consumers of {@code database}, as the last count found them. */
  public void consumers(String database, long count) {
    gauge(consumers, Meters.EVENTS_CONSUMERS, "Events consumers of the database", database).set(count);
  }

  /** The share consumers this node holds open for the consumers of {@code database}. */
  public void shareConsumers(String database, long open) {
    gauge(shareConsumers, Meters.EVENTS_SHARE_CONSUMERS, "Kafka share consumers this node holds open for events consumers", database)
        .set(open);
  }

  /** A consumer of {@code database} removed, {@code reason} idle or requested. */
  public void removed(String database, String reason) {
    Counter.builder(Meters.EVENTS_CONSUMERS_REMOVED).tag("database", database).tag("reason", reason)
        .description("Events consumers removed with their share group and dead-letter topic").register(registry).increment();
  }

  /** A creation of a consumer of {@code database} refused by the quota {@code limit} (its config key). */
  public void refused(String database, String limit) {
    Counter.builder(Meters.EVENTS_CONSUMER_REFUSALS).tag("database", database).tag("limit", limit)
        .description("Creations of events consumers refused by a quota").register(registry).increment();
  }

  private AtomicLong gauge(Map<String, AtomicLong> values, String name, String description, String database) {
    return values.computeIfAbsent(database, db -> {
      AtomicLong value = new AtomicLong();
      Gauge.builder(name, value, AtomicLong::get).tag("database", db).description(description).register(registry);
      return value;
    });
  }
}
