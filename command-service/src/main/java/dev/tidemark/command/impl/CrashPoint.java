package dev.tidemark.command.impl;

import java.util.Random;

/**
 * Fault injection for the crash-safety test, off unless a system property turns it on: with
 * {@code -Dtidemark.crash.after-commit=<probability>} (and {@code -Dtidemark.crash.seed=<n>} for a
 * repeatable run) the JVM halts, as {@code kill -9} would, right after a change committed and
 * before its reply is sent: the one moment a random kill from outside rarely hits.
 */
final class CrashPoint {

  private static final double AFTER_COMMIT = Double.parseDouble(System.getProperty("tidemark.crash.after-commit", "0"));
  private static final Random RANDOM = new Random(Long.getLong("tidemark.crash.seed", 0L));

  private CrashPoint() {}

  static void afterCommit() {
    if (AFTER_COMMIT > 0 && RANDOM.nextDouble() < AFTER_COMMIT) {
      Runtime.getRuntime().halt(137);
    }
  }
}
