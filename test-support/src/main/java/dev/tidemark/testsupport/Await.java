package dev.tidemark.testsupport;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits for a condition with a deadline, checking every 100 ms; tests wait for what they expect, never a fixed time. */
public final class Await {

  private Await() {}

  /** True as soon as {@code condition} holds; false if it still does not after {@code timeout}. */
  public static boolean until(BooleanSupplier condition, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() > deadline) {
        return false;
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
  }
}
