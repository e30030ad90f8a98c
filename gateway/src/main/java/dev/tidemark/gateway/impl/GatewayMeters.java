package dev.tidemark.gateway.impl;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.metrics.Meters;
import dev.tidemark.gateway.impl.call.InFlight;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Vertx;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway's gauges: what it holds open now, and how many sessions the cluster keeps. Kept out
 * of the endpoint so that counting stays one call there.
 */
final class GatewayMeters {

  /** Counting the cluster's sessions asks every member, so it is done this often, not per scrape. */
  static final long SESSION_COUNT_INTERVAL_MS = 5_000;

  private GatewayMeters() {}

  /** Call on the gateway's context: the session count's timer ends when the gateway is undeployed. */
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
}
