package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How far each events consumer trails the changelog topic, one gauge per share group. Every node
 * with an events service measures every consumer of its database, so each shows the same values:
 * a dashboard takes the maximum by group, and a consumer whose workers are all gone still shows
 * its lag rising.
 */
public final class EventsLag {

  private final MeterRegistry registry;
  private final Map<String, AtomicLong> byGroup = new ConcurrentHashMap<>();
  /** The groups each database's probe reported last: a node serving several databases has one probe per database. */
  private final Map<String, Set<String>> groupsOf = new ConcurrentHashMap<>();

  EventsLag(MeterRegistry registry) {
    this.registry = registry;
  }

  /** The last measure of each consumer of {@code database}; a group of it no longer measured loses its gauge. */
  public void report(String database, Map<String, Long> lagByGroup) {
    lagByGroup.forEach((group, lag) -> byGroup.computeIfAbsent(group, g -> {
      AtomicLong value = new AtomicLong();
      Gauge.builder(Meters.EVENTS_CONSUMER_LAG, value, AtomicLong::get).tag("group", g)
          .description("Changes of the changelog topic an events consumer has not finished yet").register(registry);
      return value;
    }).set(Math.max(0, lag)));
    Set<String> before = groupsOf.put(database, Set.copyOf(lagByGroup.keySet()));
    for (String gone : before == null ? Set.<String>of() : before) {
      if (!lagByGroup.containsKey(gone)) {
        byGroup.remove(gone);
        registry.find(Meters.EVENTS_CONSUMER_LAG).tag("group", gone).meters().forEach(registry::remove);
      }
    }
  }
}
