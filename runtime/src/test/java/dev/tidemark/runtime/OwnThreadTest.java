package dev.tidemark.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
    List<Context> completedOn = new CopyOnWriteArrayList<>();
    Future<List<String>> both = Future.all(
        thread.run(() -> ran.add("first:" + Thread.currentThread().getName())),
        thread.run(() -> ran.add("second:" + Thread.currentThread().getName())))
        .map(all -> {
          completedOn.add(Vertx.currentContext());
          return ran;
        });
    assertEquals(List.of("first:tm-test-client", "second:tm-test-client"), await(both));
    assertSame(owner, completedOn.get(0));
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
