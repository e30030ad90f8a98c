package dev.tidemark.node;

import dev.tidemark.node.cli.TidemarkCommand;

/** The one runnable: {@code java -jar tidemark.jar <command>}. */
public final class Main {

  private Main() {}

  /**
   * The JDK's common pool gets one thread per core less one. Below two threads, asynchronous
   * completions in Hazelcast (every cluster-map read: sessions, the event log, subscriptions) run
   * on a new thread each, hundreds per second under load; measured, that cost more CPU than the
   * rest of a read tool call. An operator's own setting wins.
   */
  static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  public static void main(String[] args) {
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
      System.setProperty(COMMON_POOL_PARALLELISM, String.valueOf(Math.max(2, Runtime.getRuntime().availableProcessors())));
    }
    // logging starts here, before dev mode's threads log at once: SLF4J would otherwise queue their
    // first lines while it starts and print a notice about replaying them
    org.slf4j.LoggerFactory.getILoggerFactory();
    int code = TidemarkCommand.commandLine().execute(args);
    if (code != 0) {
      System.exit(code);
    }
    // dev and serve return only once they were stopped; their shutdown hooks did the rest
    System.exit(0);
  }
}
