package dev.tidemark.gateway.impl;

import dev.tidemark.contract.Addresses;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.gateway.impl.call.InFlight;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's gauges: what it holds open now, and how many sessions the cluster keeps; and the
 * connections each instance took. Kept out of the endpoint so that counting stays one call there.
 * The gauges are registered once per node ({@link GatewayShared#start}), over the node's one
 * registry of calls and streams, so they add up every instance's without a gauge per instance.
 */
final class GatewayMeters {

  /** Counting the cluster's sessions asks every member, so it is done this often, not per scrape. */
  static final long SESSION_COUNT_INTERVAL_MS = 5_000;

  private GatewayMeters() {}

  /** Call on the context of the node's gateway part: the session count's timer ends when it is undeployed. */
  static void watch(Vertx vertx, InFlight inFlight) {
    MeterRegistry registry = Meters.of(vertx).registry();
    Gauge.builder(Meters.OPEN_STREAMS, inFlight, InFlight::streamCount)
        .description("GET and subscriptions/listen streams this gateway holds open").register(registry);
    Gauge.builder(Meters.REQUESTS_IN_FLIGHT, inFlight, InFlight::callCount)
        .description("Requests this gateway is running now").register(registry);
    AtomicLong sessions = new AtomicLong();
    Gauge.builder(Meters.SESSIONS, sessions, AtomicLong::get)
        .description("MCP sessions in the cluster, as this gateway last counted them").register(registry);
    Runnable count = () -> vertx.sharedData().getAsyncMap(Addresses.SESSIONS_MAP)
        .compose(map -> map.size())
        .onSuccess(sessions::set);
    count.run();
    vertx.setPeriodic(SESSION_COUNT_INTERVAL_MS, t -> count.run());
  }

  /**
   * The counter of connections taken by the instance on the calling event loop; instances that
   * share a loop share it. It shows whether connections spread over the loops: one client that
   * keeps one connection is served by one loop.
   */
  static Counter connections(Vertx vertx) {
    return Counter.builder(Meters.GATEWAY_CONNECTIONS).tag("loop", Meters.loopLabel())
        .description("HTTP connections the gateway instance on this event loop took").register(Meters.of(vertx).registry());
  }
}
