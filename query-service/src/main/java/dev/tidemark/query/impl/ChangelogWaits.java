package dev.tidemark.query.impl;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where waiting watches wait: one {@code LISTEN tidemark_changelog} per database on this node, on
 * Tidemark's own login, which the relay notifies after each batch it stores. A waiting call holds
 * no connection, only a timer; each notice wakes every waiter, which then looks at the changelog
 * again. The relay does not notify when it only moves {@code decoded_lsn} on, and a notice sent
 * while the LISTEN connection was down is lost, so every wait also ends after at most the time
 * its caller asks for, and the caller looks again.
 */
public final class ChangelogWaits {

  private static final Logger LOG = LoggerFactory.getLogger(ChangelogWaits.class);
  static final String CHANNEL = "tidemark_changelog";
  private static final long RECONNECT_MS = 1_000;

  private record Waiter(Context context, Promise<Boolean> promise, long timer) {}

  private final Vertx vertx;
  private final PgConnectOptions login;
  private final Map<String, Waiter> waiters = new ConcurrentHashMap<>();
  /** Watch calls running on this node, by request id: true once cancelled. */
  private final Map<String, Boolean> running = new ConcurrentHashMap<>();
  private PgSubscriber subscriber;
  private volatile boolean ending;

  public ChangelogWaits(Vertx vertx, PgConnectOptions login) {
    this.vertx = vertx;
    this.login = login;
  }

  /**
   * Completes at the next changelog notice, or after {@code maxMs}: with {@code true} when the call
   * {@code requestId} should stop waiting (it was cancelled, or the node drains), else {@code false}.
   */
  public Future<Boolean> next(String requestId, long maxMs) {
    if (ending || Boolean.TRUE.equals(running.get(requestId))) {
      return Future.succeededFuture(true);
    }
    listen();
    Context ctx = vertx.getOrCreateContext();
    Promise<Boolean> promise = Promise.promise();
    long timer = vertx.setTimer(Math.max(1, maxMs), t -> wake(requestId, false));
    waiters.put(requestId, new Waiter(ctx, promise, timer));
    // a cancellation or the drain that came after the check above found no waiter to wake: the waiter wakes itself
    if (ending || Boolean.TRUE.equals(running.get(requestId))) {
      wake(requestId, true);
    }
    return promise.future();
  }

  /** The watch call {@code requestId} runs here until {@link #finish}, so that a cancellation finds it. */
  public void begin(String requestId) {
    running.put(requestId, false);
  }

  public void finish(String requestId) {
    running.remove(requestId);
  }

  /** Ends the wait of watch call {@code requestId}, if it runs on this node, and any wait it would start later. */
  public void cancel(String requestId) {
    if (running.replace(requestId, true) != null) {
      wake(requestId, true);
    }
  }

  /** Ends every wait now and every later one: the node drains, and waiting watches answer at once. */
  public void endAll() {
    ending = true;
    waiters.keySet().forEach(id -> wake(id, true));
  }

  public Future<Void> close() {
    endAll();
    return subscriber == null ? Future.succeededFuture() : subscriber.close();
  }

  private void wakeAll() {
    waiters.keySet().forEach(id -> wake(id, false));
  }

  private void wake(String requestId, boolean stop) {
    Waiter w = waiters.remove(requestId);
    if (w != null) {
      vertx.cancelTimer(w.timer());
      w.context().runOnContext(v -> w.promise().tryComplete(stop));
    }
  }

  private synchronized void listen() {
    if (subscriber != null || ending) {
      return;
    }
    subscriber = PgSubscriber.subscriber(vertx, login).reconnectPolicy(attempts -> ending ? -1L : RECONNECT_MS);
    subscriber.channel(CHANNEL).subscribeHandler(v -> wakeAll()).handler(payload -> wakeAll());
    subscriber.connect().onFailure(err -> {
      // waits still end at their timers, and their callers look again
      LOG.warn("cannot LISTEN {} for watches, they look at the changelog on their own timers: {}", CHANNEL, err.getMessage());
      synchronized (this) {
        subscriber = null;
      }
    });
  }
}
