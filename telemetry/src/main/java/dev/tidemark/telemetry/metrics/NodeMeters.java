package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.MeterRegistry;

/** What a node's roles count into: its registry, its tool-call meters, its relay lag and its events consumers' lag. */
public final class NodeMeters {

  private final MeterRegistry registry;
  private final ToolCallMeters toolCalls;
  private final RelayLag relayLag;
  private final EventsLag eventsLag;
  private final CallerPoolMeters callerPools;
  private final EventsMeters events;

  NodeMeters(MeterRegistry registry) {
    this.registry = registry;
    this.toolCalls = new ToolCallMeters(registry);
    this.relayLag = new RelayLag(registry);
    this.eventsLag = new EventsLag(registry);
    this.callerPools = new CallerPoolMeters(registry);
    this.events = new EventsMeters(registry);
  }

  public MeterRegistry registry() {
    return registry;
  }

  public ToolCallMeters toolCalls() {
    return toolCalls;
  }

  /** Fed by the events service of each node with the query role. */
  public EventsLag eventsLag() {
    return eventsLag;
  }

  /** Fed by the events service of each node with the query role: consumers, share consumers, removals and refusals. */
  public EventsMeters events() {
    return events;
  }

  /** Fed by the shares of the query and command roles' caller pools. */
  public CallerPoolMeters callerPools() {
    return callerPools;
  }

  /** Fed by the role that publishes the changelog. */
  public RelayLag relayLag() {
    return relayLag;
  }
}
