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

  /** Returns once {@code condition} holds, checking every 50 ms; an AssertionError naming {@code what} after {@code timeout}. */
  public static void that(String what, Duration timeout, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what);
      }
    }
  }
}
