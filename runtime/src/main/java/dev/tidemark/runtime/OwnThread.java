package dev.tidemark.runtime;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * One daemon thread for a blocking client that is not thread-safe (a Kafka producer or share
 * consumer): its tasks run there one after another, in the order they were handed over, and each
 * result completes on the owner's context. Vert.x's ordered worker executors are not used for
 * this, since a task handed to one that was closed is rejected inside the context's queue and its
 * future never completes, which made a node's stop wait forever.
 */
public final class OwnThread {

  private final Context context;
  private final String whenStopped;
  private final ExecutorService thread;

  /** @param whenStopped the message of the failure a task handed over after {@link #shutdown()} gets */
  public OwnThread(String name, Context context, String whenStopped) {
    this.context = context;
    this.whenStopped = whenStopped;
    this.thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
  }

  /** Runs {@code work} on the thread, after every task handed over before it; completes on the owner's context. */
  public <T> Future<T> run(Callable<T> work) {
    Promise<T> promise = Promise.promise();
    try {
      thread.execute(() -> {
        try {
          T value = work.call();
          context.runOnContext(v -> promise.complete(value));
        } catch (Throwable e) {
          context.runOnContext(v -> promise.fail(e));
        }
      });
    } catch (RejectedExecutionException e) {
      return Future.failedFuture(new IllegalStateException(whenStopped));
    }
    return promise.future();
  }

  /** Lets the tasks already handed over finish, then ends the thread; later tasks fail at once. */
  public void shutdown() {
    thread.shutdown();
  }
}
