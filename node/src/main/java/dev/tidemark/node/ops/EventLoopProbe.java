package dev.tidemark.node.ops;

import dev.tidemark.telemetry.metrics.Meters;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Measures how late each event loop runs a timer: a loop that something blocks, or that has more
 * work than it can do, runs it late, and every call it serves waits as long. Deployed with one
 * instance per event loop; Vert.x gives successive instances successive loops. Labelled by the
 * loop's own number, as every per-loop meter is ({@link Meters#loopLabel}), so that a late loop
 * can be told by the connections its gateway instance serves.
 */
public final class EventLoopProbe extends VerticleBase {

  static final long INTERVAL_MS = 1000;

  private final AtomicLong lateNanos = new AtomicLong();
  private long expected;

  @Override
  public Future<?> start() {
    Gauge.builder(Meters.EVENT_LOOP_DELAY, lateNanos, n -> n.get() / 1e9).baseUnit("seconds").tag("loop", Meters.loopLabel())
        .description("How late the event loop ran a timer at the last probe").register(Meters.of(vertx).registry());
    expected = System.nanoTime() + INTERVAL_MS * 1_000_000;
    vertx.setPeriodic(INTERVAL_MS, t -> {
      long now = System.nanoTime();
      lateNanos.set(Math.max(0, now - expected));
      expected = now + INTERVAL_MS * 1_000_000;
    });
    return Future.succeededFuture();
  }
}
