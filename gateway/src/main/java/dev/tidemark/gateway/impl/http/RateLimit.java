package dev.tidemark.gateway.impl.http;

import dev.tidemark.contract.Addresses;
import dev.tidemark.config.TidemarkConfig.CallLimits;
import dev.tidemark.gateway.impl.context.OwnContext;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Counter;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Each caller's budget of tool calls, held in one cluster counter per caller, so that a caller
 * who spreads its calls over every gateway gets the same budget as one who uses one. The budget
 * is counted in fixed windows of {@link CallLimits#windowMillis()}, {@code burst} calls each: one
 * atomic add per call, and no lock or compare-and-set that parallel calls would contend on
 * (only the first call of a window resets the counter).
 */
public final class RateLimit {

  /** JSON-RPC error code of a call refused by the rate limit (implementation-defined server error range). */
  public static final int RATE_LIMITED = -32029;

  private static final long COUNT_MASK = (1L << Addresses.RATE_COUNT_BITS) - 1;
  private static final int RESET_ATTEMPTS = 8;

  /** Callers whose counters are kept at most: past it the map starts again, rather than grow with every caller ever seen. */
  private static final int COUNTERS_KEPT = 10_000;

  private final Vertx vertx;
  private final CallLimits limits;
  /** Each caller's cluster counter, looked up once: the lookup is a cluster round trip of its own. */
  private final Map<String, Future<Counter>> counters = new ConcurrentHashMap<>();
  private final LongSupplier clock;

  public RateLimit(Vertx vertx, CallLimits limits) {
    this(vertx, limits, System::currentTimeMillis);
  }

  RateLimit(Vertx vertx, CallLimits limits, LongSupplier clock) {
    this.vertx = vertx;
    this.limits = limits;
    this.clock = clock;
  }

  /** Succeeds when the caller may make one more call now; fails with a 429 {@link Refusal} naming when to retry. */
  public Future<Void> take(String callerId, Object requestId) {
    if (!limits.rateLimited()) {
      return Future.succeededFuture();
    }
    return counter(callerId)
        .compose(counter -> count(counter, RESET_ATTEMPTS))
        .compose(verdict -> verdict.allowed() ? Future.succeededFuture() : refusal(verdict.window(), requestId).future());
  }

  /**
   * The map is the node's, shared by every gateway instance: a lookup that a call on another loop
   * began, and that has not completed yet, is heard on this call's own loop.
   */
  private Future<Counter> counter(String callerId) {
    Future<Counter> known = counters.get(callerId);
    if (known != null) {
      return OwnContext.of(known);
    }
    if (counters.size() >= COUNTERS_KEPT) {
      counters.clear();
    }
    Future<Counter> looked = vertx.sharedData().getCounter(Addresses.RATE_COUNTER_PREFIX + callerId);
    counters.put(callerId, looked);
    // a failed lookup is not kept: the next call looks again
    looked.onFailure(err -> counters.remove(callerId, looked));
    return looked;
  }

  record Verdict(long window, boolean allowed) {}

  private Future<Verdict> count(Counter counter, int attempts) {
    long window = clock.getAsLong() / limits.windowMillis();
    return counter.incrementAndGet().compose(value -> {
      long counted = value >>> Addresses.RATE_COUNT_BITS;
      if (counted >= window) {
        // the current window (or a later one, when this node's clock is behind another's)
        return Future.succeededFuture(new Verdict(counted, (value & COUNT_MASK) <= limits.burst()));
      }
      // the counter still holds an earlier window: the first call to notice starts the new one
      long fresh = (window << Addresses.RATE_COUNT_BITS) | 1;
      return counter.compareAndSet(value, fresh).compose(reset -> {
        if (reset) {
          return Future.succeededFuture(new Verdict(window, true));
        }
        // another call moved the counter first: count again; after several rounds of racing resets at a
        // window's start, where the whole burst is still free, the call is let through
        return attempts > 1 ? count(counter, attempts - 1) : Future.succeededFuture(new Verdict(window, true));
      });
    });
  }

  /** 429 with the seconds until the next window as Retry-After, in the header and in the error's data. */
  Refusal refusal(long window, Object requestId) {
    long waitMillis = (window + 1) * limits.windowMillis() - clock.getAsLong();
    long seconds = Math.max(1, (waitMillis + 999) / 1000);
    JsonObject error = JsonRpc.error(requestId, RATE_LIMITED, "Rate limit reached: this caller may make " + limits.callsPerMinute()
        + " tool calls a minute, " + limits.burst() + " in any window of " + limits.windowMillis() + " ms, across the cluster."
        + " Nothing was run. Retry after " + seconds + " s.",
        new JsonObject().put("retryAfterSeconds", seconds).put("retriable", true));
    return Refusal.rpc(429, error).with(HttpHeaders.RETRY_AFTER.toString(), String.valueOf(seconds));
  }
}
