package dev.tidemark.gateway.impl.context;

import dev.tidemark.gateway.impl.context.OwnContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.PromiseInternal;

/**
 * Where a waiting call hears its answer: on its own Vert.x context. A node runs one gateway
 * instance per event loop, and what the instances share (the call limiter's queue, a cluster
 * lookup several calls wait for, the node-wide consumers that end calls when a member leaves) can
 * complete a call's future on another loop's thread. A plain promise runs its listeners on the
 * thread that completes it, so the call's next steps, and its response, which only the call's own
 * loop may write, would run there. A promise of the call's context hands them back to that
 * context, with the log ids and the trace it carries.
 */
public final class OwnContext {

  private OwnContext() {}

  /** A promise whose listeners run on the calling context; a plain one when no context calls (a unit test's thread). */
  public static <T> Promise<T> promise() {
    ContextInternal context = ContextInternal.current();
    return context == null ? Promise.promise() : context.promise();
  }

  /**
   * {@code future}, heard on the calling context. A future that already completed runs a listener
   * at once on the thread that adds it, so it is returned as it is; so is any future when no context calls.
   */
  public static <T> Future<T> of(Future<T> future) {
    ContextInternal context = ContextInternal.current();
    if (context == null || future.isComplete()) {
      return future;
    }
    PromiseInternal<T> here = context.promise();
    future.onComplete(here);
    return here.future();
  }
}
