package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
}
