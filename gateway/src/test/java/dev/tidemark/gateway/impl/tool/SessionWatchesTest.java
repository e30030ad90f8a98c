package dev.tidemark.gateway.impl.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.testsupport.Threads;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The node's count of waiting watch calls per session, which every gateway instance shares. */
class SessionWatchesTest {

  @Test
  void aSessionPastItsLimitIsRefusedWhileAnotherSessionIsCountedApart() {
    SessionWatches watches = new SessionWatches(2);
    watches.enter("s1");
    watches.enter("s1");
    ToolException refused = assertThrows(ToolException.class, () -> watches.enter("s1"));
    assertEquals(ErrorCode.LIMIT_EXCEEDED, refused.code());
    assertEquals(SessionWatches.LIMIT, refused.details().getString("limit"));
    assertEquals(2, refused.details().getInteger("max_waiting"));
    watches.enter("s2");
  }

  @Test
  void endingOneWatchTwiceFreesOneSlotOnly() {
    SessionWatches watches = new SessionWatches(2);
    Runnable first = watches.enter("s1");
    watches.enter("s1");
    first.run();
    first.run();
    watches.enter("s1");
    assertThrows(ToolException.class, () -> watches.enter("s1"), "the second end of one watch gave back another watch's slot");
  }

  @Test
  void watchesEnteringAndEndingOnManyThreadsNeverExceedTheLimitAndLoseNoSlot() throws Exception {
    int max = 3;
    int threads = 16;
    SessionWatches watches = new SessionWatches(max);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger admitted = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    Threads.together(threads, () -> {
      for (int i = 0; i < 2_000; i++) {
        Runnable end;
        try {
          end = watches.enter("s1");
        } catch (ToolException e) {
          refused.incrementAndGet();
          continue;
        }
        admitted.incrementAndGet();
        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
        inside.decrementAndGet();
        end.run();
        end.run();
      }
      return null;
    });
    assertTrue(most.get() <= max, "at most " + max + " at once, saw " + most.get());
    assertEquals(threads * 2_000, admitted.get() + refused.get());
    assertTrue(admitted.get() > 0);
    // every slot came back: the session may again hold exactly max
    List<Runnable> again = new ArrayList<>();
    for (int i = 0; i < max; i++) {
      again.add(watches.enter("s1"));
    }
    assertThrows(ToolException.class, () -> watches.enter("s1"));
    again.forEach(Runnable::run);
  }
}
