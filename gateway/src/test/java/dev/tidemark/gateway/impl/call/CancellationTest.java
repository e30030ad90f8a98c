package dev.tidemark.gateway.impl.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Threads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/** What a request undoes when it is cancelled: its actions may be added on one thread while another cancels. */
class CancellationTest {

  @Test
  void cancellingRunsEachActionOnceAndALaterActionAtOnce() {
    Cancellation cancellation = new Cancellation();
    AtomicInteger runs = new AtomicInteger();
    cancellation.onCancel(runs::incrementAndGet);
    cancellation.onCancel(runs::incrementAndGet);
    assertFalse(cancellation.cancelled());
    assertEquals(0, runs.get(), "nothing runs before the cancellation");

    cancellation.cancel();
    assertTrue(cancellation.cancelled());
    assertEquals(2, runs.get());
    cancellation.cancel();
    assertEquals(2, runs.get(), "a second cancellation runs nothing again");

    cancellation.onCancel(runs::incrementAndGet);
    assertEquals(3, runs.get(), "an action added after the cancellation runs at once");
  }

  @Test
  void actionsAddedWhileOtherThreadsCancelEachRunExactlyOnce() throws Exception {
    int threads = 8;
    int perThread = 500;
    for (int round = 0; round < 20; round++) {
      Cancellation cancellation = new Cancellation();
      AtomicIntegerArray runs = new AtomicIntegerArray(threads * perThread);
      List<Callable<Void>> work = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int first = t * perThread;
        work.add(() -> {
          for (int i = first; i < first + perThread; i++) {
            int slot = i;
            cancellation.onCancel(() -> runs.incrementAndGet(slot));
          }
          return null;
        });
      }
      // two cancellers at once: the actions still run once, not once per canceller
      for (int c = 0; c < 2; c++) {
        work.add(() -> {
          cancellation.cancel();
          return null;
        });
      }
      Threads.together(work);
      for (int i = 0; i < runs.length(); i++) {
        assertEquals(1, runs.get(i), "action " + i + " of round " + round);
      }
    }
  }
}
