package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.WaitedFor;
import dev.tidemark.telemetry.metrics.CallerPoolMeters;
import dev.tidemark.telemetry.metrics.Meters;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One caller role's pool of connections shared out between the role's callers: a caller holds at
 * most {@code perCaller} of the pool's {@code connections} at once, and when the pool is full the
 * next free connection goes to the callers that wait, one caller after another in turn (first come,
 * first served within one caller's calls). So a caller that floods its role with slow statements
 * waits for its own, and the others of the role keep the rest of the pool (docs/security.md).
 *
 * <p>A call that gets no turn within {@code waitMs} is refused, having run nothing, with a
 * retriable UNAVAILABLE ({@code waited_for: "connection"}) that names the limit it met and when a
 * connection is due back at the latest: every statement ends by {@code database.statement-timeout-ms}.
 * Used on one verticle's event loop, but safe from any thread.
 */
public final class FairShare {

  /** The least {@code retry_after_ms} a refusal names: a caller that retries at once only queues again. */
  static final long MIN_RETRY_AFTER_MS = 100;

  /** What a refusal names as the limit the caller met: the share of one caller, or the pool itself. */
  public static final String SHARE_LIMIT = "database.caller-share-percent";
  public static final String POOL_LIMIT = "database.pool-size";

  private static final class Waiter {
    final Promise<Runnable> promise = Promise.promise();
    long timer = -1;
  }

  /** One caller's connections held now (by when each was taken) and calls waiting, in order. */
  private static final class Lane {
    final List<Long> heldSince = new ArrayList<>();
    final ArrayDeque<Waiter> waiting = new ArrayDeque<>();
  }

  private final Vertx vertx;
  private final String poolName;
  private final CallerPoolMeters meters;
  /** Calls waiting now, in the node's gauge of the pools of this name. */
  private final AtomicInteger waitingGauge;
  private final int connections;
  private final int perCaller;
  private final long waitMs;
  private final long statementTimeoutMs;
  private final Map<String, Lane> lanes = new HashMap<>();
  /** The callers with calls waiting, in the order of their turns. */
  private final ArrayDeque<String> turns = new ArrayDeque<>();
  private int held;

  /**
   * @param poolName the pool's purpose, as its metrics label names it
   * @param connections the pool's size
   * @param perCaller the most one caller holds at once, 1 to {@code connections}
   * @param waitMs the longest a call waits for its turn
   * @param statementTimeoutMs the longest a statement holds a connection, for the refusal's estimate
   */
  public FairShare(Vertx vertx, String poolName, int connections, int perCaller, long waitMs, long statementTimeoutMs) {
    if (connections < 1 || perCaller < 1 || perCaller > connections) {
      throw new IllegalArgumentException("a share of " + perCaller + " of " + connections + " connections");
    }
    this.vertx = vertx;
    this.poolName = poolName;
    this.meters = Meters.of(vertx).callerPools();
    this.waitingGauge = meters.waiting(poolName);
    this.connections = connections;
    this.perCaller = perCaller;
    this.waitMs = waitMs;
    this.statementTimeoutMs = statementTimeoutMs;
  }

  public int perCaller() {
    return perCaller;
  }

  /**
   * Completes with the release of a turn of {@code caller} (to run exactly once, when its connection
   * is back in the pool), or fails with the refusal once the call waited {@code waitMs}.
   */
  public Future<Runnable> acquire(String caller) {
    Waiter waiter;
    synchronized (this) {
      Lane lane = lanes.computeIfAbsent(caller, c -> new Lane());
      if (lane.waiting.isEmpty() && lane.heldSince.size() < perCaller && held < connections) {
        return Future.succeededFuture(take(caller, lane));
      }
      waiter = new Waiter();
      if (lane.waiting.isEmpty()) {
        turns.add(caller);
      }
      lane.waiting.add(waiter);
      waitingGauge.incrementAndGet();
      waiter.timer = vertx.setTimer(Math.max(1, waitMs), t -> giveUp(caller, waiter));
    }
    return waiter.promise.future();
  }

  /** Connections held now, by every caller. */
  public synchronized int held() {
    return held;
  }

  /** Connections {@code caller} holds now. */
  public synchronized int heldBy(String caller) {
    Lane lane = lanes.get(caller);
    return lane == null ? 0 : lane.heldSince.size();
  }

  /** Calls waiting for a turn now, of every caller. */
  public synchronized int waiting() {
    return lanes.values().stream().mapToInt(l -> l.waiting.size()).sum();
  }

  private Runnable take(String caller, Lane lane) {
    long since = System.currentTimeMillis();
    lane.heldSince.add(since);
    held++;
    boolean[] released = {false};
    return () -> {
      synchronized (this) {
        if (released[0]) {
          return;
        }
        released[0] = true;
      }
      release(caller, since);
    };
  }

  private void release(String caller, long since) {
    List<Runnable> granted = new ArrayList<>();
    synchronized (this) {
      Lane lane = lanes.get(caller);
      lane.heldSince.remove(Long.valueOf(since));
      held--;
      dispatch(granted);
      forgetIfIdle(caller, lane);
    }
    granted.forEach(Runnable::run);  // outside the lock: a granted call goes on at once
  }

  /** Hands free connections to waiting calls, one caller after another, skipping callers at their share. */
  private void dispatch(List<Runnable> granted) {
    int passedOver = 0;  // callers looked at since the last grant: once every one was, nobody may go
    while (held < connections && !turns.isEmpty() && passedOver < turns.size()) {
      String caller = turns.poll();
      Lane lane = lanes.get(caller);
      boolean grants = lane.heldSince.size() < perCaller;
      if (grants) {
        Waiter next = lane.waiting.poll();
        waitingGauge.decrementAndGet();
        vertx.cancelTimer(next.timer);
        Runnable release = take(caller, lane);
        granted.add(() -> next.promise.complete(release));
      }
      if (!lane.waiting.isEmpty()) {
        turns.add(caller);
      }
      passedOver = grants ? 0 : passedOver + 1;
    }
  }

  private void giveUp(String caller, Waiter waiter) {
    ToolException refusal;
    synchronized (this) {
      Lane lane = lanes.get(caller);
      if (lane == null || !lane.waiting.remove(waiter)) {
        return;
      }
      waitingGauge.decrementAndGet();
      if (lane.waiting.isEmpty()) {
        turns.remove(caller);
      }
      refusal = refusal(lane);
      forgetIfIdle(caller, lane);
    }
    meters.refused(poolName, refusal.details().getString("limit"));
    waiter.promise.tryFail(refusal);
  }

  private void forgetIfIdle(String caller, Lane lane) {
    if (lane.heldSince.isEmpty() && lane.waiting.isEmpty()) {
      lanes.remove(caller);
    }
  }

  /** Held under the lock: the limit the caller met, and when one of the connections it waits for is due back at the latest. */
  private ToolException refusal(Lane lane) {
    boolean atShare = lane.heldSince.size() >= perCaller;
    long oldest = Long.MAX_VALUE;
    for (Lane l : atShare ? List.of(lane) : lanes.values()) {
      for (long since : l.heldSince) {
        oldest = Math.min(oldest, since);
      }
    }
    long due = oldest == Long.MAX_VALUE ? MIN_RETRY_AFTER_MS : oldest + statementTimeoutMs - System.currentTimeMillis();
    long retryAfter = Math.max(MIN_RETRY_AFTER_MS, Math.min(due, statementTimeoutMs));
    JsonObject details = WaitedFor.CONNECTION.details()
        .put("limit", atShare ? SHARE_LIMIT : POOL_LIMIT)
        .put("max_connections", atShare ? perCaller : connections)
        .put("retry_after_ms", retryAfter);
    String why = atShare
        ? "Your calls already hold " + perCaller + " of this node's " + connections + " connections for your role, the most one caller may"
            + " hold at once (" + SHARE_LIMIT + "), and none of them ended within " + waitMs + " ms"
        : "All " + connections + " connections of your role's pool on this node stayed busy with other callers' calls for " + waitMs + " ms";
    return new ToolException(ErrorCode.UNAVAILABLE, why + ", so this call did not start: nothing was read or changed. Retry in about "
        + retryAfter + " ms, or send fewer calls at once.", details);
  }
}
