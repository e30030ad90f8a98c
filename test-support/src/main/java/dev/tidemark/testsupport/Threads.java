package dev.tidemark.testsupport;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Threads that run tasks released together, for tests of what several threads share; kept for
 * many rounds when a test races the same steps again and again.
 */
public final class Threads implements AutoCloseable {

  private final int size;
  private final ExecutorService pool;

  public Threads(int size) {
    this.size = size;
    this.pool = Executors.newFixedThreadPool(size);
  }

  /**
   * Runs each of {@code tasks} on a thread of its own, all released at once, and returns what
   * each returned, in their order; fails with a task's failure, or when one takes over 10 s.
   */
  public <T> List<T> run(List<? extends Callable<T>> tasks) throws Exception {
    if (tasks.size() > size) {
      throw new IllegalArgumentException(tasks.size() + " tasks cannot start together on " + size + " threads");
    }
    CyclicBarrier start = new CyclicBarrier(tasks.size());
    List<Future<T>> running = new ArrayList<>();
    for (Callable<T> task : tasks) {
      running.add(pool.submit(() -> {
        start.await(10, TimeUnit.SECONDS);
        return task.call();
      }));
    }
    List<T> results = new ArrayList<>();
    for (Future<T> result : running) {
      results.add(result.get(10, TimeUnit.SECONDS));
    }
    return results;
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }

  /** {@link #run} once, on threads made for it. */
  public static <T> List<T> together(List<? extends Callable<T>> tasks) throws Exception {
    try (Threads threads = new Threads(tasks.size())) {
      return threads.run(tasks);
    }
  }

  /** {@code threads} threads that each run {@code task}, released together. */
  public static <T> List<T> together(int threads, Callable<T> task) throws Exception {
    return together(Collections.nCopies(threads, task));
  }
}
