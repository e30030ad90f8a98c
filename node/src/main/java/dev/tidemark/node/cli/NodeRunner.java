package dev.tidemark.node.cli;

import dev.tidemark.node.TidemarkNode;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Keeps a started node running until the JVM is asked to stop, then stops it and what it depends on. */
final class NodeRunner {

  /** What the stop may take after the drain: undeploying the roles, leaving the cluster, closing pools. */
  static final long CLOSE_MILLIS = 20_000;

  private NodeRunner() {}

  /** Blocks until SIGTERM or Ctrl-C; {@code after} runs once the node has drained and left the cluster. */
  static void runUntilStopped(TidemarkNode node, Runnable after) {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.stop().toCompletionStage().toCompletableFuture()
            .get(node.config().drainTimeoutMs() + CLOSE_MILLIS, TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        System.err.println("tidemark: node did not stop cleanly: " + e);
      } finally {
        after.run();
        stopped.countDown();
      }
    }, "tidemark-shutdown"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
