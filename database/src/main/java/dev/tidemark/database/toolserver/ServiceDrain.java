package dev.tidemark.database.toolserver;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tool requests a service verticle (query or command) is running, so that a stopping node
 * first stops taking new ones and lets these finish: once its consumer is unregistered, the
 * cluster sends the role's requests to the other nodes that run it, and the statements already
 * running here commit or return as they would have, before the node closes its pools.
 */
public final class ServiceDrain {

  private final AtomicInteger running = new AtomicInteger();
  private volatile Promise<Void> idle;

  /** Counts {@code answered} as running until it completes. */
  public void track(Future<Void> answered) {
    running.incrementAndGet();
    answered.onComplete(ar -> {
      // the drain is read after the count: a drain that begins in between sees the count at zero itself
      if (running.decrementAndGet() == 0) {
        Promise<Void> waiting = idle;
        if (waiting != null) {
          waiting.tryComplete();
        }
      }
    });
  }

  /**
   * Unregisters {@code consumer}, then completes once no request runs any more, or after
   * {@code timeoutMillis}: what still runs then ends with the node's pools. Runs on
   * {@code context}, the verticle's own. Completes with how many requests were still running.
   */
  public Future<Integer> drain(Context context, MessageConsumer<?> consumer, long timeoutMillis) {
    if (consumer == null) {
      return Future.succeededFuture(0);
    }
    Promise<Void> done = Promise.promise();
    idle = done;
    Promise<Integer> drained = Promise.promise();
    context.runOnContext(x -> consumer.unregister()
        .compose(v -> {
          if (running.get() == 0) {
            done.tryComplete();
          }
          long timer = context.owner().setTimer(timeoutMillis, t -> done.tryComplete());
          return done.future().onComplete(ar -> context.owner().cancelTimer(timer));
        })
        .map(v -> running.get())
        .onComplete(drained));
    return drained.future();
  }
}
