package dev.tidemark.gateway.impl.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.CallLimits;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.gateway.impl.EventLoops;
import dev.tidemark.gateway.impl.call.Cancellation;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** One limiter shared by gateway instances on several event loops, called from all of them at once. */
class CallLimiterLoopsTest {

  private static final String CALLER = "alice";

  /** What a waiter heard, and on which loop. */
  private record Heard(int loop, int heardOn, CallLimiter.Admission admission) {}

  @Test
  void callsFromFourLoopsAtOnceNeverRunMoreThanTheCapAndEachHearsItsSlotOnItsOwnLoop() throws Exception {
    int loops = 4;
    int perLoop = 200;
    int cap = 3;
    try (EventLoops el = new EventLoops(loops)) {
      CallLimiter limiter = new CallLimiter(el.vertx(), new CallLimits(cap, loops * perLoop, 60_000, 0, 0));
      AtomicInteger running = new AtomicInteger();
      AtomicInteger most = new AtomicInteger();
      AtomicInteger ran = new AtomicInteger();
      ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
      CountDownLatch go = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(loops * perLoop);
      for (int loop = 0; loop < loops; loop++) {
        int l = loop;
        el.run(l, () -> {
          await(go);
          for (int i = 0; i < perLoop; i++) {
            limiter.admit(CALLER, new Cancellation()).onSuccess(admission -> {
              if (el.current() != l) {
                problems.add("a call of loop " + l + " went on on loop " + el.current());
              }
              if (admission.refused()) {
                problems.add("refused, though the queue holds every call: " + admission.refusal().getMessage());
              }
              while (problems.size() > 3) {
                problems.poll(); // a sample is enough to say what went wrong
              }
              most.accumulateAndGet(running.incrementAndGet(), Math::max);
              // each call ends a moment later on its own loop, handing its slot to a waiter of any loop
              el.vertx().setTimer(1, t -> {
                running.decrementAndGet();
                ran.incrementAndGet();
                admission.release().run();
                done.countDown();
              });
            });
          }
        });
      }
      go.countDown();
      assertTrue(done.await(60, TimeUnit.SECONDS), "every call ran: " + ran.get() + " of " + loops * perLoop);
      assertEquals(cap, most.get(), "the cap is the node's, not one per loop");
      assertEquals(List.of(), List.copyOf(problems), "a waiter goes on on its own loop, granted");
      // every slot came back: a new call runs at once
      assertFalse(el.call(0, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS).result().refused());
    }
  }

  @Test
  void aSlotFreedOnOneLoopGoesToTheWaitersInTheOrderTheyCameEachOnItsOwnLoop() throws Exception {
    try (EventLoops el = new EventLoops(4)) {
      CallLimiter limiter = new CallLimiter(el.vertx(), new CallLimits(1, 10, 60_000, 0, 0));
      CallLimiter.Admission first = el.call(0, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS).result();
      ConcurrentLinkedQueue<Heard> heard = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<Heard>> waiters = new ArrayList<>();
      // loops 3, 1, 2 queue up in that order, each after the one before has joined the queue
      for (int loop : new int[] {3, 1, 2}) {
        CompletableFuture<Heard> waiter = new CompletableFuture<>();
        Future<CallLimiter.Admission> pending = el.call(loop, () -> limiter.admit(CALLER, new Cancellation()).onSuccess(a -> {
          Heard h = new Heard(loop, el.current(), a);
          heard.add(h);
          waiter.complete(h);
        })).get(10, TimeUnit.SECONDS);
        assertFalse(pending.isComplete(), "loop " + loop + " waits");
        waiters.add(waiter);
      }
      el.run(0, first.release()).get(10, TimeUnit.SECONDS);
      for (int i = 0; i < waiters.size(); i++) {
        Heard h = waiters.get(i).get(10, TimeUnit.SECONDS);
        assertEquals(h.loop(), h.heardOn(), "heard on its own loop");
        assertFalse(h.admission().refused());
        assertEquals(i + 1, heard.size(), "the next waiter is granted only when this one ends");
        // the waiter ends on its own loop, and hands the slot on to the next in line
        el.run(h.loop(), h.admission().release()).get(10, TimeUnit.SECONDS);
      }
      assertEquals(List.of(3, 1, 2), heard.stream().map(Heard::loop).toList(), "first come, first served");
    }
  }

  @Test
  void aWaiterCancelledFromAnotherLoopLeavesTheQueueHearsItOnItsOwnLoopAndTheSlotGoesToTheNext() throws Exception {
    try (EventLoops el = new EventLoops(3)) {
      CallLimiter limiter = new CallLimiter(el.vertx(), new CallLimits(1, 10, 60_000, 0, 0));
      CallLimiter.Admission first = el.call(0, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS).result();
      Cancellation cancelled = new Cancellation();
      CompletableFuture<Heard> one = new CompletableFuture<>();
      CompletableFuture<Heard> two = new CompletableFuture<>();
      el.call(1, () -> limiter.admit(CALLER, cancelled).onSuccess(a -> one.complete(new Heard(1, el.current(), a))))
          .get(10, TimeUnit.SECONDS);
      el.call(2, () -> limiter.admit(CALLER, new Cancellation()).onSuccess(a -> two.complete(new Heard(2, el.current(), a))))
          .get(10, TimeUnit.SECONDS);
      // a cancellation is heard on the node's own context, never the waiter's
      el.run(0, cancelled::cancel).get(10, TimeUnit.SECONDS);
      Heard h1 = one.get(10, TimeUnit.SECONDS);
      assertEquals(1, h1.heardOn());
      assertTrue(h1.admission().refused());
      assertEquals(ErrorCode.UNAVAILABLE, h1.admission().refusal().code());
      assertTrue(h1.admission().refusal().getMessage().contains("cancelled while it waited"), h1.admission().refusal().getMessage());
      assertFalse(two.isDone(), "the slot is still taken");
      el.run(0, first.release()).get(10, TimeUnit.SECONDS);
      Heard h2 = two.get(10, TimeUnit.SECONDS);
      assertEquals(2, h2.heardOn());
      assertFalse(h2.admission().refused(), "the cancelled waiter left the queue, so the slot went to the next");
    }
  }

  @Test
  void aFullQueueRefusesAtOnceWhicheverLoopAsks() throws Exception {
    try (EventLoops el = new EventLoops(2)) {
      CallLimiter limiter = new CallLimiter(el.vertx(), new CallLimits(1, 1, 60_000, 0, 0));
      el.call(0, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS);
      Future<CallLimiter.Admission> queued = el.call(1, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS);
      assertFalse(queued.isComplete());
      Future<CallLimiter.Admission> full = el.call(0, () -> limiter.admit(CALLER, new Cancellation())).get(10, TimeUnit.SECONDS);
      assertTrue(full.isComplete() && full.result().refused(), "the queue of one is the node's: loop 1's waiter fills it");
      assertTrue(full.result().refusal().getMessage().contains("and 1 more are waiting"), full.result().refusal().getMessage());
      // another caller has lanes of its own
      assertFalse(el.call(1, () -> limiter.admit("bob", new Cancellation())).get(10, TimeUnit.SECONDS).result().refused());
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
