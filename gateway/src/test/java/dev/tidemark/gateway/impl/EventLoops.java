package dev.tidemark.gateway.impl;

import io.vertx.core.Context;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A Vert.x instance with one context on each of its event loops, as a node's gateway instances
 * are: for tests of what those instances share, called from several loops at once on real threads.
 */
public final class EventLoops implements AutoCloseable {

  private final Vertx vertx;
  private final List<Context> contexts;
  private final List<Thread> threads = new ArrayList<>();

  public EventLoops(int loops) throws Exception {
    vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(loops));
    List<Context> started = new CopyOnWriteArrayList<>();
    // as a node deploys its gateway: one instance per loop, successive instances on successive loops
    vertx.deployVerticle(() -> new VerticleBase() {
      @Override
      public Future<?> start() {
        started.add(context);
        return Future.succeededFuture();
      }
    }, new DeploymentOptions().setInstances(loops)).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    contexts = List.copyOf(started);
    for (int i = 0; i < loops; i++) {
      threads.add(call(i, Thread::currentThread).get(10, TimeUnit.SECONDS));
    }
    if (threads.stream().distinct().count() != loops) {
      throw new IllegalStateException("the contexts do not run on " + loops + " different loops: " + threads);
    }
  }

  public Vertx vertx() {
    return vertx;
  }

  public int size() {
    return contexts.size();
  }

  public Context context(int loop) {
    return contexts.get(loop);
  }

  /** The thread of loop {@code loop}. */
  public Thread thread(int loop) {
    return threads.get(loop);
  }

  /** The loop whose thread runs the caller, or -1. */
  public int current() {
    return threads.indexOf(Thread.currentThread());
  }

  /** Runs {@code task} on loop {@code loop}'s context; completes with what it returned. */
  public <T> CompletableFuture<T> call(int loop, Supplier<T> task) {
    CompletableFuture<T> done = new CompletableFuture<>();
    contexts.get(loop).runOnContext(v -> {
      try {
        done.complete(task.get());
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    });
    return done;
  }

  /** Runs {@code task} on loop {@code loop}'s context; completes once it ran. */
  public CompletableFuture<Void> run(int loop, Runnable task) {
    return call(loop, () -> {
      task.run();
      return null;
    });
  }

  @Override
  public void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
