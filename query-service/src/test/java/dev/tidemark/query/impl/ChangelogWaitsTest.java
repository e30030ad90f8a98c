package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Threads;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetServer;
import io.vertx.pgclient.PgConnectOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The waits of the watch calls a query node runs, which a cancellation from any gateway and the
 * node's drain end from other threads. The LISTEN connection goes to a socket that accepts and
 * never answers, so every wait here ends by a cancellation, the drain, or its own timer.
 */
class ChangelogWaitsTest {

  /** Longer than any test runs: a wait that ends did not end at its timer. */
  private static final long FOREVER_MS = 600_000;

  private final Vertx vertx = Vertx.vertx();
  private NetServer silent;
  private ChangelogWaits waits;

  @BeforeEach
  void start() throws Exception {
    silent = vertx.createNetServer().connectHandler(socket -> {}).listen(0, "127.0.0.1").await(10, TimeUnit.SECONDS);
    waits = new ChangelogWaits(vertx, new PgConnectOptions().setHost("127.0.0.1").setPort(silent.actualPort())
        .setDatabase("tidemark").setUser("tidemark").setPassword("x"));
  }

  @AfterEach
  void stop() throws Exception {
    waits.close().await(10, TimeUnit.SECONDS);
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  void aWaitWithNoNoticeEndsAtItsTimeToLookAgain() throws Exception {
    waits.begin("r1");
    assertFalse(waits.next("r1", 1).await(10, TimeUnit.SECONDS));
  }

  @Test
  void aCancelledCallStopsWaitingNowAndLater() throws Exception {
    waits.begin("r1");
    Future<Boolean> waiting = waits.next("r1", FOREVER_MS);
    waits.cancel("r1");
    assertTrue(waiting.await(10, TimeUnit.SECONDS));
    assertTrue(waits.next("r1", FOREVER_MS).await(10, TimeUnit.SECONDS), "a wait it would start later ends at once");
  }

  @Test
  void aCancellationOfACallThatDoesNotRunHereChangesNothing() throws Exception {
    waits.cancel("elsewhere");
    waits.begin("r1");
    waits.cancel("r2");
    waits.finish("r1");
    // r1 finished: its id is free again, and no cancellation was kept for it
    waits.begin("r1");
    assertFalse(waits.next("r1", 1).await(10, TimeUnit.SECONDS));
  }

  @Test
  void theDrainEndsEveryWaitAndEveryLaterOne() throws Exception {
    List<Future<Boolean>> waiting = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      waits.begin("r" + i);
      waiting.add(waits.next("r" + i, FOREVER_MS));
    }
    waits.endAll();
    for (Future<Boolean> w : waiting) {
      assertTrue(w.await(10, TimeUnit.SECONDS));
    }
    assertTrue(waits.next("late", FOREVER_MS).await(10, TimeUnit.SECONDS));
  }

  @Test
  void aCancellationThatRacesTheStartOfAWaitEndsIt() throws Exception {
    int calls = 1_000;
    List<Future<Boolean>> waiting = new ArrayList<>();
    try (Threads threads = new Threads(2)) {
      for (int i = 0; i < calls; i++) {
        String id = "r" + i;
        waits.begin(id);
        Callable<Future<Boolean>> waiter = () -> waits.next(id, FOREVER_MS);
        Callable<Future<Boolean>> canceller = () -> {
          waits.cancel(id);
          return null;
        };
        waiting.add(threads.run(List.of(waiter, canceller)).get(0));
      }
    }
    try {
      // a lost cancellation leaves its wait running until FOREVER_MS: these seconds are a bound, not a pace
      Future.join(waiting).await(5, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      // counted below
    }
    assertEquals(calls, waiting.stream().filter(w -> Boolean.TRUE.equals(w.result())).count(), "every cancelled call stopped waiting");
  }
}
