package dev.tidemark.auth.impl;

import dev.tidemark.auth.Revocation;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hears of revoked tokens, for one node. The truth is {@code tidemark.api_token.invalidated_at},
 * read by a poll every {@link #POLL_MILLIS}; the trigger that sets it also sends a notice on
 * {@link #CHANNEL}, which this watcher LISTENs for on a connection of its own and answers with a
 * poll at once. The notice is only a wake-up (it carries nothing, so a forged one costs a query),
 * and the regular poll bounds what a lost notice or a lost connection costs. Each revocation is
 * reported once. Everything runs on the context that called {@link #start}.
 */
final class RevocationWatcher {

  private static final Logger LOG = LoggerFactory.getLogger(RevocationWatcher.class);

  static final String CHANNEL = "tidemark_token_revoked";
  static final long POLL_MILLIS = 1000;
  /**
   * A cached token is trusted only while a poll that started this recently succeeded; past it,
   * every request looks its token up, so a node cut off from notices never serves a revoked token
   * for long.
   */
  static final long FRESH_MILLIS = POLL_MILLIS + 500;
  private static final long RECONNECT_MILLIS = 1000;
  /**
   * How far before the previous poll each poll looks: invalidated_at is taken inside the revoking
   * transaction, which commits a little later (the CLI's at once; one made by hand may take longer).
   */
  private static final long OVERLAP_MILLIS = 60_000;
  /**
   * How far back the first poll looks: longer than a session can stay idle (30 minutes), so that a
   * gateway started after a revocation still knows which sessions it ended.
   */
  static final long HISTORY_MILLIS = 40 * 60_000L;

  /** At least one row, so that the database's clock comes back even when nothing was revoked. */
  private static final String POLL = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8 AS now, t.id::text AS id, "
      + "(extract(epoch FROM CASE WHEN t.invalidated_at > to_timestamp($1::int8 / 1000.0) THEN t.invalidated_at ELSE t.expires_at END)"
      + " * 1000)::int8 AS at FROM (SELECT 1) one "
      + "LEFT JOIN tidemark.api_token t ON t.invalidated_at > to_timestamp($1::int8 / 1000.0) "
      // a token that expired since the last poll ends like a revoked one
      + "OR (t.expires_at > to_timestamp($1::int8 / 1000.0) AND t.expires_at <= clock_timestamp())";

  private final Vertx vertx;
  private final Pool pool;
  private final PgConnectOptions notices;
  private final Handler<Revocation> revoked;
  /** Revocations already reported, by "id@at", kept while a poll can still return them. */
  private final Map<String, Long> seen = new HashMap<>();
  private PgSubscriber subscriber;
  private long timer = -1;
  private boolean stopped;
  private boolean polling;
  private boolean pollAgain;
  /** The database's clock at the last successful poll; -1 before the first. */
  private long watermark = -1;
  private volatile long freshSinceNanos = Long.MIN_VALUE;

  RevocationWatcher(Vertx vertx, Pool pool, PgConnectOptions notices, Handler<Revocation> revoked) {
    this.vertx = vertx;
    this.pool = pool;
    this.notices = notices;
    this.revoked = revoked;
  }

  /** Completes at once: the node serves while the first poll and the LISTEN connection come up. */
  Future<Void> start() {
    timer = vertx.setPeriodic(POLL_MILLIS, t -> poll());
    poll();
    listen();
    return Future.succeededFuture();
  }

  Future<Void> stop() {
    stopped = true;
    vertx.cancelTimer(timer);
    return subscriber == null ? Future.succeededFuture() : subscriber.close();
  }

  /** Whether every revocation committed more than {@link #FRESH_MILLIS} ago has been reported. */
  boolean fresh() {
    return System.nanoTime() - freshSinceNanos < FRESH_MILLIS * 1_000_000L;
  }

  private void report(Revocation r) {
    try {
      revoked.handle(r);
    } catch (RuntimeException e) {
      // one receiver's bug must not keep the others from hearing of the next revocation
      LOG.error("a revocation handler failed", e);
    }
  }

  private void listen() {
    if (stopped) {
      return;
    }
    subscriber = PgSubscriber.subscriber(vertx, notices)
        .reconnectPolicy(attempts -> stopped ? -1L : RECONNECT_MILLIS);
    // a (re)subscription polls too: notices sent while the connection was down are lost
    subscriber.channel(CHANNEL).subscribeHandler(v -> {
      // without a handler the client prints the error's stack itself (57P01 when PostgreSQL stops); the close handler acts on it
      subscriber.actualConnection().exceptionHandler(err -> LOG.debug("the LISTEN connection failed: {}", err.toString()));
      poll();
    }).handler(payload -> poll());
    subscriber.closeHandler(v -> retryListen());
    subscriber.connect().onFailure(err -> {
      LOG.warn("cannot LISTEN for token revocations, polling every {} ms meanwhile: {}", POLL_MILLIS, err.getMessage());
      retryListen();
    });
  }

  private void retryListen() {
    if (!stopped) {
      vertx.setTimer(RECONNECT_MILLIS, t -> {
        if (subscriber == null || subscriber.closed()) {
          listen();
        }
      });
    }
  }

  /** One poll at a time; a wake-up during a poll asks for one more when it ends. */
  private void poll() {
    if (stopped) {
      return;
    }
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    pollAgain = false;
    long startedNanos = System.nanoTime();
    long since = watermark < 0 ? System.currentTimeMillis() - HISTORY_MILLIS : watermark - OVERLAP_MILLIS;
    pool.preparedQuery(POLL).execute(Tuple.of(since))
        .onSuccess(rows -> {
          for (Row r : rows) {
            watermark = r.getLong("now");
            String id = r.getString("id");
            if (id == null) {
              continue;
            }
            long at = r.getLong("at");
            if (seen.putIfAbsent(id + "@" + at, at) == null) {
              report(new Revocation(id, at));
            }
          }
          long forgettable = watermark - OVERLAP_MILLIS;
          seen.values().removeIf(at -> at <= forgettable);
          freshSinceNanos = startedNanos;
        })
        .onFailure(err -> LOG.warn("cannot poll for token revocations; tokens are looked up on every request meanwhile: {}",
            err.getMessage()))
        .onComplete(ar -> {
          polling = false;
          if (pollAgain) {
            poll();
          }
        });
  }
}
