package dev.tidemark.gateway.impl.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Failed credential checks, counted per source address over the last minute: each one is
 * answered later than the one before (up to {@link #MAX_DELAY_MILLIS}), so that guessing from one
 * address gets slower the more it guesses, and the count is logged with the source, never with
 * what was sent. Held per gateway node and shared by its instances (a guesser whose connections land
 * on different event loops is slowed as one), under a lock: a map update per failure is nothing
 * beside the wait it decides. A guesser that spreads over gateway nodes is slowed on each.
 */
public final class FailedCredentials {

  static final long BASE_DELAY_MILLIS = Authentication.FAILED_AUTH_DELAY_MILLIS;
  static final long MAX_DELAY_MILLIS = 5_000;
  static final long WINDOW_MILLIS = 60_000;
  /** Sources remembered at once; the oldest are forgotten first. */
  static final int MAX_SOURCES = 10_000;

  private static final Logger LOG = LoggerFactory.getLogger(FailedCredentials.class);

  private static final class Count {
    long windowStart;
    int failures;
  }

  private final LongSupplier clock;
  private final Map<String, Count> bySource = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Count> eldest) {
      return size() > MAX_SOURCES;
    }
  };

  public FailedCredentials() {
    this(System::currentTimeMillis);
  }

  FailedCredentials(LongSupplier clock) {
    this.clock = clock;
  }

  /** Counts one failure from {@code source} and returns how long to wait before answering it. */
  public synchronized long failed(String source, String reason) {
    long now = clock.getAsLong();
    Count c = bySource.computeIfAbsent(source, s -> new Count());
    if (now - c.windowStart >= WINDOW_MILLIS) {
      c.windowStart = now;
      c.failures = 0;
    }
    c.failures++;
    if (c.failures == 1 || Integer.bitCount(c.failures) == 1 && c.failures >= 8) {
      // the first of a minute, then the 8th, 16th, 32nd...: enough to see a guesser without a line per guess
      LOG.warn("failed credential check from {}: {} in the last minute ({})", source, c.failures, reason);
    }
    return Math.min(MAX_DELAY_MILLIS, BASE_DELAY_MILLIS * c.failures);
  }

  /** Failures counted for {@code source} in its current minute. */
  public synchronized int failures(String source) {
    Count c = bySource.get(source);
    return c == null || clock.getAsLong() - c.windowStart >= WINDOW_MILLIS ? 0 : c.failures;
  }
}
