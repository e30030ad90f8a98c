package dev.tidemark.database.toolserver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.database.Threads;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The requests a service verticle runs, counted by the threads that answer them, and the drain that waits for them. */
class ServiceDrainTest {

  private static final long LONG_WAIT_MS = 60_000;

  private final Vertx vertx = Vertx.vertx();
  private final Context context = vertx.getOrCreateContext();

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private MessageConsumer<Object> consumer() throws Exception {
    MessageConsumer<Object> consumer = vertx.eventBus().consumer("tidemark.test.service", msg -> {});
    consumer.completion().await(10, TimeUnit.SECONDS);
    return consumer;
  }

  @Test
  void aServiceThatNeverListenedHasNothingToDrain() throws Exception {
    assertEquals(0, new ServiceDrain().drain(context, null, LONG_WAIT_MS).await(10, TimeUnit.SECONDS));
  }

  @Test
  void anIdleServiceStopsListeningAndDrainsAtOnce() throws Exception {
    ServiceDrain drain = new ServiceDrain();
    MessageConsumer<Object> consumer = consumer();
    Promise<Void> answered = Promise.promise();
    drain.track(answered.future());
    answered.complete();
    assertEquals(0, drain.drain(context, consumer, LONG_WAIT_MS).await(10, TimeUnit.SECONDS));
    assertFalse(consumer.isRegistered(), "new requests go to the role's other nodes");
  }

  @Test
  void theDrainWaitsForTheLastRunningRequestFailedOrNot() throws Exception {
    ServiceDrain drain = new ServiceDrain();
    Promise<Void> first = Promise.promise();
    Promise<Void> second = Promise.promise();
    drain.track(first.future());
    drain.track(second.future());
    Future<Integer> drained = drain.drain(context, consumer(), LONG_WAIT_MS);
    first.fail("the statement failed");
    assertFalse(drained.isComplete(), "one request still runs");
    second.complete();
    assertEquals(0, drained.await(10, TimeUnit.SECONDS));
  }

  @Test
  void aDrainThatTimesOutCountsTheRequestsStillRunning() throws Exception {
    ServiceDrain drain = new ServiceDrain();
    drain.track(Promise.<Void>promise().future());
    drain.track(Promise.<Void>promise().future());
    Promise<Void> done = Promise.promise();
    drain.track(done.future());
    done.complete();
    assertEquals(2, drain.drain(context, consumer(), 1).await(10, TimeUnit.SECONDS));
  }

  @Test
  void requestsAnsweredOnManyThreadsWhileTheDrainBeginsAreEachCountedOut() throws Exception {
    int threads = 8;
    int perThread = 2_000;
    ServiceDrain drain = new ServiceDrain();
    List<List<Promise<Void>>> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      List<Promise<Void>> mine = new ArrayList<>();
      for (int i = 0; i < perThread; i++) {
        Promise<Void> p = Promise.promise();
        drain.track(p.future());
        mine.add(p);
      }
      running.add(mine);
    }
    MessageConsumer<Object> consumer = consumer();
    List<Callable<Object>> work = new ArrayList<>();
    for (List<Promise<Void>> mine : running) {
      work.add(() -> {
        mine.forEach(Promise::complete);
        return null;
      });
    }
    work.add(() -> drain.drain(context, consumer, LONG_WAIT_MS));
    @SuppressWarnings("unchecked") // the last task's result: the drain
    Future<Integer> drained = (Future<Integer>) Threads.together(work).get(threads);
    // long before the drain's timeout: the last answer ends it
    assertEquals(0, drained.await(10, TimeUnit.SECONDS));
    assertTrue(running.stream().flatMap(List::stream).allMatch(p -> p.future().isComplete()));
  }
}
