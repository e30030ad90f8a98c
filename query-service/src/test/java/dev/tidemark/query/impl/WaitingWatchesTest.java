package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.testsupport.Threads;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** A node's waiting watch calls per caller, counted across its query instances. */
class WaitingWatchesTest {

  @Test
  void everyQueryInstanceOfANodeGetsTheSameCountPerDatabase() {
    Vertx vertx = Vertx.vertx();
    try {
      WaitingWatches main = WaitingWatches.of(vertx, "main");
      assertSame(main, WaitingWatches.of(vertx, "main"));
      assertNotSame(main, WaitingWatches.of(vertx, "sales"));
    } finally {
      vertx.close();
    }
  }

  @Test
  void aCallerPastItsLimitIsRefusedWithWhenItsSoonestWatchAnswers() {
    WaitingWatches watches = new WaitingWatches();
    long now = System.currentTimeMillis();
    watches.enter("alice", now + 60_000, 2);
    watches.enter("alice", now + 30_000, 2);
    ToolException refused = assertThrows(ToolException.class, () -> watches.enter("alice", now + 90_000, 2));
    assertEquals(ErrorCode.LIMIT_EXCEEDED, refused.code());
    assertEquals(WaitingWatches.LIMIT, refused.details().getString("limit"));
    assertEquals(2, refused.details().getInteger("max_waiting"));
    long retryAfter = refused.details().getLong("retry_after_ms");
    assertTrue(retryAfter <= 30_000 && retryAfter > 20_000, "the soonest deadline is 30 s away: " + retryAfter);
    watches.enter("bob", now + 60_000, 2);
  }

  @Test
  void endingAWatchTwiceFreesItsOwnSlotOnly() {
    WaitingWatches watches = new WaitingWatches();
    long deadline = System.currentTimeMillis() + 60_000;
    // two watches with the same deadline: the second end of the first must not take the second's entry
    Runnable first = watches.enter("alice", deadline, 2);
    watches.enter("alice", deadline, 2);
    first.run();
    first.run();
    watches.enter("alice", deadline, 2);
    assertThrows(ToolException.class, () -> watches.enter("alice", deadline, 2));
  }

  @Test
  void callersEnteringAndEndingOnManyThreadsNeverExceedTheLimitAndLoseNoSlot() throws Exception {
    int max = 2;
    int threads = 12;
    int callers = 3;
    WaitingWatches watches = new WaitingWatches();
    long deadline = System.currentTimeMillis() + 60_000;
    AtomicIntegerArray inside = new AtomicIntegerArray(callers);
    AtomicInteger overLimit = new AtomicInteger();
    AtomicInteger admitted = new AtomicInteger();
    List<Callable<Void>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int caller = t % callers;
      work.add(() -> {
        for (int i = 0; i < 2_000; i++) {
          Runnable end;
          try {
            end = watches.enter("caller-" + caller, deadline + i, max);
          } catch (ToolException e) {
            continue;
          }
          admitted.incrementAndGet();
          if (inside.incrementAndGet(caller) > max) {
            overLimit.incrementAndGet();
          }
          inside.decrementAndGet(caller);
          end.run();
        }
        return null;
      });
    }
    Threads.together(work);
    assertEquals(0, overLimit.get());
    assertTrue(admitted.get() > 0);
    for (int c = 0; c < callers; c++) {
      for (int i = 0; i < max; i++) {
        watches.enter("caller-" + c, deadline, max);
      }
      int caller = c;
      assertThrows(ToolException.class, () -> watches.enter("caller-" + caller, deadline, max), "every slot came back, and no more");
    }
  }
}
