package dev.tidemark.telemetry.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Shareable;

/**
 * The meters of one node, found through its Vert.x instance: several nodes can share a JVM (the
 * tests run clusters in one), and each must count only its own calls. The node installs its
 * registry before it deploys a role; a role that finds none (a verticle deployed on its own, in a
 * test) counts into a registry that keeps nothing.
 *
 * <p>Every Tidemark meter name is declared here, once. docs/operations.md lists each with its
 * labels, and a test keeps the page and a real scrape equal. A label never carries what a caller
 * sent or read (no SQL, no value, no token, no session id): only names from a fixed set.
 */
public final class Meters {

  /** Counter: tool calls by {@code tool} and {@code outcome} (ok, an error code, or protocol_error). */
  public static final String TOOL_CALLS = "tidemark.tool.calls";
  /** Timer with histogram buckets: how long a tool call took at the gateway, by {@code tool}. */
  public static final String TOOL_CALL_DURATION = "tidemark.tool.call.duration";
  /** Gauge: MCP sessions (2025-11-25) in the cluster, as this gateway last counted them. */
  public static final String SESSIONS = "tidemark.sessions";
  /** Gauge: GET and subscriptions/listen streams this gateway holds open. */
  public static final String OPEN_STREAMS = "tidemark.streams.open";
  /** Gauge: tool calls and other requests this gateway is running now. */
  public static final String REQUESTS_IN_FLIGHT = "tidemark.requests.in.flight";
  /** Gauge: changes captured but not yet published to Kafka. */
  public static final String RELAY_LAG_CHANGES = "tidemark.relay.lag.changes";
  /** Gauge: age in seconds of the oldest change not yet published to Kafka; 0 when none waits. */
  public static final String RELAY_LAG_SECONDS = "tidemark.relay.lag.seconds";
  /**
   * Gauge: changes of the changelog topic an events consumer has not finished yet, by {@code group}
   * (its share group id: the database, a hash of its owner and its name).
   */
  public static final String EVENTS_CONSUMER_LAG = "tidemark.events.consumer.lag";
  /** Gauge: events consumers of a database (each a share group), by {@code database}. */
  public static final String EVENTS_CONSUMERS = "tidemark.events.consumers";
  /** Gauge: Kafka share consumers this node holds open for events consumers, by {@code database}. */
  public static final String EVENTS_SHARE_CONSUMERS = "tidemark.events.share.consumers";
  /** Counter: events consumers removed, by {@code database} and {@code reason} (idle, requested). */
  public static final String EVENTS_CONSUMERS_REMOVED = "tidemark.events.consumers.removed";
  /** Counter: creations of events consumers refused by a quota, by {@code database} and {@code limit} (its config key). */
  public static final String EVENTS_CONSUMER_REFUSALS = "tidemark.events.consumer.refusals";
  /** Gauge: calls waiting for a caller's turn of a caller pool, by {@code pool_name}. */
  public static final String CALLER_POOL_WAITING = "tidemark.caller.pool.waiting";
  /** Counter: calls that got no connection of a caller pool in time, by {@code pool_name} and {@code limit} (the config key they met). */
  public static final String CALLER_POOL_REFUSALS = "tidemark.caller.pool.refusals";
  /** Gauge: how late, in seconds, a task ran on each event loop at the last probe, by {@code loop}. */
  public static final String EVENT_LOOP_DELAY = "tidemark.event.loop.delay";
  /** Counter: HTTP connections the gateway took, by the {@code loop} whose gateway instance serves them. */
  public static final String GATEWAY_CONNECTIONS = "tidemark.gateway.connections";

  private static final String EVENT_LOOP_THREAD = "vert.x-eventloop-thread-";

  /** A registry that keeps nothing, for roles deployed without a node. */
  private static final MeterRegistry NONE = new CompositeMeterRegistry();
  private static final String MAP = "tidemark.meters";
  private static final String KEY = "node";

  private record Installed(NodeMeters meters) implements Shareable {}

  private Meters() {}

  /** Makes {@code registry} the one the roles of {@code vertx} count into. */
  public static NodeMeters install(Vertx vertx, MeterRegistry registry) {
    NodeMeters meters = new NodeMeters(registry);
    vertx.sharedData().getLocalMap(MAP).put(KEY, new Installed(meters));
    return meters;
  }

  /** The meters of the node {@code vertx} belongs to. */
  public static NodeMeters of(Vertx vertx) {
    Object installed = vertx.sharedData().getLocalMap(MAP).get(KEY);
    return installed instanceof Installed i ? i.meters() : Holder.UNINSTALLED;
  }

  /**
   * The {@code loop} label of the event loop that runs the caller: the number Vert.x gives its
   * thread ({@code vert.x-eventloop-thread-<n>}), so that every per-loop meter names a loop alike;
   * {@code other} off an event loop.
   */
  public static String loopLabel() {
    String thread = Thread.currentThread().getName();
    return thread.startsWith(EVENT_LOOP_THREAD) ? thread.substring(EVENT_LOOP_THREAD.length()) : "other";
  }

  private static final class Holder {
    static final NodeMeters UNINSTALLED = new NodeMeters(NONE);
  }
}
