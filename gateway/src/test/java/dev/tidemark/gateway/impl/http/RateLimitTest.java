package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.CallLimits;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RateLimitTest {

  private final Vertx vertx = Vertx.vertx();
  private final AtomicLong now = new AtomicLong(1_800_000_000_000L);

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private RateLimit limit(int perMinute, int burst) {
    return new RateLimit(vertx, new CallLimits(32, 64, 5000, perMinute, burst), now::get);
  }

  /** How many of {@code n} calls sent at once were let through. */
  private int allowed(RateLimit limit, String caller, int n) throws Exception {
    List<Future<Void>> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      calls.add(limit.take(caller, i));
    }
    Future.join(calls).toCompletionStage().toCompletableFuture().handle((v, e) -> null).get(10, TimeUnit.SECONDS);
    return (int) calls.stream().filter(Future::succeeded).count();
  }

  @Test
  void parallelCallsAreCountedExactlyAgainstTheBurst() throws Exception {
    RateLimit limit = limit(60, 10); // windows of 10 s, 10 calls each
    assertEquals(10, allowed(limit, "c", 25));
    assertEquals(0, allowed(limit, "c", 3));
    assertEquals(10, allowed(limit, "other", 10), "each caller has a budget of its own");
  }

  @Test
  void theNextWindowStartsAFreshBudget() throws Exception {
    RateLimit limit = limit(60, 10);
    assertEquals(10, allowed(limit, "c", 12));
    now.addAndGet(10_000);
    assertEquals(10, allowed(limit, "c", 16), "every call racing to start the window is counted in it");
  }

  @Test
  void aRefusalIsA429ThatSaysWhenTheWindowEnds() throws Exception {
    RateLimit limit = limit(6, 0); // burst 0: the whole minute's budget, in one-minute windows
    now.set(60_000L * 1000 + 15_500); // 15.5 s into a window
    assertEquals(6, allowed(limit, "c", 6));
    Throwable err = limit.take("c", 7).toCompletionStage().toCompletableFuture().handle((v, e) -> e).get(10, TimeUnit.SECONDS);
    Refusal r = (Refusal) (err.getCause() == null ? err : err.getCause());
    assertEquals(429, r.answer().status());
    assertEquals("45", r.answer().headers().get(io.vertx.core.http.HttpHeaders.RETRY_AFTER.toString()), "44.5 s to go, rounded up");
    assertEquals(-32029, r.answer().body().getJsonObject("error").getInteger("code"));
    assertEquals(7, r.answer().body().getInteger("id"));
    assertTrue(r.answer().body().getJsonObject("error").getJsonObject("data").getBoolean("retriable"));
  }

  @Test
  void withoutALimitNothingIsCounted() throws Exception {
    assertEquals(100, allowed(limit(0, 0), "c", 100));
  }
}
