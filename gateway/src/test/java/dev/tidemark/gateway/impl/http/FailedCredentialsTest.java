package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.testsupport.Threads;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class FailedCredentialsTest {

  private final AtomicLong now = new AtomicLong(1_000_000);
  private final FailedCredentials failures = new FailedCredentials(now::get);

  @Test
  void eachFailureFromOneSourceWaitsLongerUpToTheCap() {
    assertEquals(250, failures.failed("10.0.0.1", "unknown token"));
    assertEquals(500, failures.failed("10.0.0.1", "unknown token"));
    assertEquals(750, failures.failed("10.0.0.1", "unknown token"));
    for (int i = 0; i < 30; i++) {
      failures.failed("10.0.0.1", "unknown token");
    }
    assertEquals(FailedCredentials.MAX_DELAY_MILLIS, failures.failed("10.0.0.1", "unknown token"));
    assertEquals(34, failures.failures("10.0.0.1"));
    assertEquals(250, failures.failed("10.0.0.2", "unknown token"), "another source is counted apart");
  }

  @Test
  void theCountStartsAgainAfterAMinute() {
    failures.failed("10.0.0.1", "expired");
    failures.failed("10.0.0.1", "expired");
    now.addAndGet(FailedCredentials.WINDOW_MILLIS);
    assertEquals(0, failures.failures("10.0.0.1"));
    assertEquals(250, failures.failed("10.0.0.1", "expired"));
  }
  @Test
  void pastItsBoundTheSourceSeenLongestAgoIsForgotten() {
    failures.failed("first", "unknown token");
    failures.failed("touched", "unknown token");
    for (int i = 0; i < FailedCredentials.MAX_SOURCES - 2; i++) {
      failures.failed("10.1." + i, "unknown token");
    }
    failures.failed("touched", "unknown token");
    failures.failed("one more", "unknown token");
    assertEquals(0, failures.failures("first"));
    assertEquals(2, failures.failures("touched"), "a source that failed again is seen recently");
    assertEquals(1, failures.failures("one more"));
  }

  @Test
  void failuresFromOneSourceOnManyLoopsAtOnceAreEachCountedOnce() throws Exception {
    int threads = 8;
    int each = 500;
    Map<Long, AtomicInteger> delays = new ConcurrentHashMap<>();
    Callable<Void> guesser = () -> {
      for (int i = 0; i < each; i++) {
        delays.computeIfAbsent(failures.failed("10.0.0.9", "unknown token"), d -> new AtomicInteger()).incrementAndGet();
      }
      return null;
    };
    Threads.together(Collections.nCopies(threads, guesser));
    assertEquals(threads * each, failures.failures("10.0.0.9"));
    // each failure got the next delay: every one below the cap was given exactly once
    List<Long> belowCap = new ArrayList<>();
    for (long d = FailedCredentials.BASE_DELAY_MILLIS; d < FailedCredentials.MAX_DELAY_MILLIS; d += FailedCredentials.BASE_DELAY_MILLIS) {
      belowCap.add(d);
      assertEquals(1, delays.get(d).get(), "the delay of " + d + " ms");
    }
    assertEquals(threads * each - belowCap.size(), delays.get(FailedCredentials.MAX_DELAY_MILLIS).get());
  }
}
