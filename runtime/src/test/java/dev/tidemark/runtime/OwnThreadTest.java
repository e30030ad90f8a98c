package dev.tidemark.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OwnThreadTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void tasksRunOnTheNamedThreadInTheOrderHandedOverAndCompleteOnTheOwnersContext() throws Exception {
    Context owner = vertx.getOrCreateContext();
    OwnThread thread = new OwnThread("tm-test-client", owner, "stopped");
    List<String> ran = new CopyOnWriteArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    Future<Boolean> first = thread.run(() -> go.await(10, TimeUnit.SECONDS) && ran.add("first:" + Thread.currentThread().getName()));
    Future<Boolean> second = thread.run(() -> ran.add("second:" + Thread.currentThread().getName()));
    // held until the handler is on, so that it runs where the result completes and not on this thread
    CompletableFuture<Context> completedOn = new CompletableFuture<>();
    second.onComplete(done -> completedOn.complete(Vertx.currentContext()));
    go.countDown();
    assertTrue(await(first) && await(second));
    assertEquals(List.of("first:tm-test-client", "second:tm-test-client"), ran);
    assertSame(owner, completedOn.get(10, TimeUnit.SECONDS));
    thread.shutdown();
  }

  @Test
  void aTaskHandedOverAfterShutdownFailsAtOnceWithTheGivenMessage() throws Exception {
    OwnThread thread = new OwnThread("tm-test-client", vertx.getOrCreateContext(), "the client was stopped: start the node again");
    assertEquals(1, await(thread.run(() -> 1)));
    thread.shutdown();
    ExecutionException e = assertThrows(ExecutionException.class, () -> await(thread.run(() -> 2)));
    assertInstanceOf(IllegalStateException.class, e.getCause());
    assertEquals("the client was stopped: start the node again", e.getCause().getMessage());
  }

  @Test
  void aTaskThatThrowsFailsItsFutureAndLaterTasksStillRun() throws Exception {
    OwnThread thread = new OwnThread("tm-test-client", vertx.getOrCreateContext(), "stopped");
    Future<Object> failed = thread.run(() -> {
      throw new IllegalArgumentException("refused");
    });
    ExecutionException e = assertThrows(ExecutionException.class, () -> await(failed));
    assertEquals("refused", e.getCause().getMessage());
    assertEquals("after", await(thread.run(() -> "after")));
    thread.shutdown();
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
