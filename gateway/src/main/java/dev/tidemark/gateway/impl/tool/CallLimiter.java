package dev.tidemark.gateway.impl.tool;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.config.TidemarkConfig.CallLimits;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.context.OwnContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * How many tool calls each caller runs at once on this gateway node, so that one caller cannot take
 * every database connection and event-loop turn from the others. Calls past the cap wait in a
 * bounded queue, first come first served; a call that finds the queue full, or waits past
 * {@code auth.queue-timeout-ms}, is refused with a retriable {@code UNAVAILABLE}.
 *
 * <p>One limiter serves every gateway instance of the node, each on its own event loop, so that the
 * cap is the node's and not one per loop. Its lanes change under a short lock (a count and a queue,
 * nothing called while it is held): confining them to one context instead would cost every call two
 * hops between loops. A slot is handed to the next waiter by whichever call ends, on whatever loop,
 * so each waiter is a promise of its own call's context ({@link OwnContext}): the call goes on there.
 */
public final class CallLimiter {

  /** A granted slot, to give back when the call ends, or the refusal to answer with. */
  public record Admission(Runnable release, ToolException refusal) {
    public boolean refused() {
      return refusal != null;
    }
  }

  private static final class Lane {
    int running;
    final ArrayDeque<Promise<Admission>> waiting = new ArrayDeque<>();
  }

  private final Vertx vertx;
  private final CallLimits limits;
  private final Map<String, Lane> lanes = new HashMap<>();

  public CallLimiter(Vertx vertx, CallLimits limits) {
    this.vertx = vertx;
    this.limits = limits;
  }

  /** Completes when the call may start, or with the refusal; a call cancelled while it waits leaves the queue. */
  public Future<Admission> admit(String caller, Cancellation cancellation) {
    Promise<Admission> waiter;
    synchronized (this) {
      Lane lane = lanes.computeIfAbsent(caller, c -> new Lane());
      if (lane.running < limits.maxConcurrent()) {
        lane.running++;
        return Future.succeededFuture(granted(caller));
      }
      if (lane.waiting.size() >= limits.maxQueued()) {
        return Future.succeededFuture(refused("and " + limits.maxQueued() + " more are waiting"));
      }
      waiter = OwnContext.promise();
      lane.waiting.add(waiter);
    }
    long timer = vertx.setTimer(limits.queueTimeoutMs(), t -> {
      if (leave(caller, waiter)) {
        waiter.tryComplete(refused("and this call waited " + limits.queueTimeoutMs() + " ms without one ending"));
      }
    });
    cancellation.onCancel(() -> {
      if (leave(caller, waiter)) {
        waiter.tryComplete(refused("and this call was cancelled while it waited"));
      }
    });
    return waiter.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  private synchronized boolean leave(String caller, Promise<Admission> waiter) {
    Lane lane = lanes.get(caller);
    return lane != null && lane.waiting.remove(waiter);
  }

  private Admission granted(String caller) {
    boolean[] released = {false};
    return new Admission(() -> {
      if (!released[0]) {
        released[0] = true;
        release(caller);
      }
    }, null);
  }

  /**
   * Hands the slot to the next waiting call, first come first served, or gives it back; completes
   * outside the lock, and the waiter hears of it on its own context.
   */
  private void release(String caller) {
    Promise<Admission> next;
    synchronized (this) {
      Lane lane = lanes.get(caller);
      next = lane.waiting.poll();
      if (next == null) {
        lane.running--;
        if (lane.running == 0) {
          lanes.remove(caller);
        }
      }
    }
    if (next != null) {
      next.complete(granted(caller));
    }
  }

  private Admission refused(String situation) {
    return new Admission(() -> {}, new ToolException(ErrorCode.UNAVAILABLE, "Too many of your calls are running on this gateway: at most "
        + limits.maxConcurrent() + " run at once, " + situation + ". Retry shortly, or wait for your running calls to end.",
        dev.tidemark.contract.WaitedFor.QUEUE.details().put("max_concurrent_calls", limits.maxConcurrent())));
  }
}
