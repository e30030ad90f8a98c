package dev.tidemark.gateway.impl.task;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.TasksConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.testsupport.Threads;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * How many tasks each caller runs on a gateway node, counted once for all its instances. Only the
 * count is used here: the node's task store and its calls in flight are not reached.
 */
class TasksTest {

  private static final int MAX = 3;

  private final Tasks tasks = new Tasks(null, new TasksConfig(60_000, 600_000, 1_000, 1_000), MAX, null, null);

  private static Call callOf(String caller) {
    return new Call(true, new Caller(caller, caller, "reader", Access.READ_ONLY, List.of("*")), "main", null, null, 1, "tools/call",
        new JsonObject(), null, "2026-07-28", null, null, null, null, new Cancellation(), 0, null);
  }

  @Test
  void aCallerRunsAtMostItsTasksAndAnotherCallerIsCountedApart() {
    Call alice = callOf("alice");
    for (int i = 0; i < MAX; i++) {
      assertTrue(tasks.reserve(alice));
    }
    assertFalse(tasks.reserve(alice));
    assertTrue(tasks.reserve(callOf("bob")));
    tasks.unreserve(alice);
    assertTrue(tasks.reserve(alice), "an ended task gives its place back");
  }

  @Test
  void anEndWithoutAStartTakesNoPlaceAway() {
    Call alice = callOf("alice");
    tasks.unreserve(alice);
    for (int i = 0; i < MAX; i++) {
      assertTrue(tasks.reserve(alice));
    }
    assertFalse(tasks.reserve(alice));
  }

  @Test
  void tasksStartingAndEndingOnManyThreadsNeverExceedTheirCallersLimitAndLoseNoPlace() throws Exception {
    int threads = 12;
    int callers = 3;
    AtomicIntegerArray inside = new AtomicIntegerArray(callers);
    AtomicIntegerArray most = new AtomicIntegerArray(callers);
    List<Callable<Void>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int caller = t % callers;
      Call call = callOf("caller-" + caller);
      work.add(() -> {
        for (int i = 0; i < 5_000; i++) {
          if (tasks.reserve(call)) {
            int now = inside.incrementAndGet(caller);
            most.accumulateAndGet(caller, now, Math::max);
            inside.decrementAndGet(caller);
            tasks.unreserve(call);
          }
        }
        return null;
      });
    }
    Threads.together(work);
    for (int c = 0; c < callers; c++) {
      assertTrue(most.get(c) <= MAX && most.get(c) > 0, "caller-" + c + " ran " + most.get(c) + " at once");
      Call call = callOf("caller-" + c);
      for (int i = 0; i < MAX; i++) {
        assertTrue(tasks.reserve(call), "every place came back");
      }
      assertFalse(tasks.reserve(call));
    }
  }
}
