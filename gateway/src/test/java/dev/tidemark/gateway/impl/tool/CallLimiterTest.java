package dev.tidemark.gateway.impl.tool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.CallLimits;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.tool.CallLimiter.Admission;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The gateway's cap on one caller's calls at once: slots, the bounded queue, its timeout, cancellation, and many threads at once. */
class CallLimiterTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private CallLimiter limiter(int maxConcurrent, int maxQueued, long queueTimeoutMs) {
    return new CallLimiter(vertx, new CallLimits(maxConcurrent, maxQueued, queueTimeoutMs, 0, 0));
  }

  private static Admission admitted(Future<Admission> f) {
    assertTrue(f.succeeded() && !f.result().refused(), () -> "not admitted at once: " + f);
    return f.result();
  }

  private static Admission answer(Future<Admission> f) throws InterruptedException {
    CountDownLatch done = new CountDownLatch(1);
    f.onComplete(x -> done.countDown());
    assertTrue(done.await(10, TimeUnit.SECONDS), "no answer");
    return f.result();
  }

  @Test
  void aCallerPastItsCapWaitsAndAnotherCallerDoesNot() {
    CallLimiter limiter = limiter(2, 10, 60_000);
    admitted(limiter.admit("a", new Cancellation()));
    admitted(limiter.admit("a", new Cancellation()));
    Future<Admission> third = limiter.admit("a", new Cancellation());
    assertFalse(third.isComplete());
    admitted(limiter.admit("b", new Cancellation()));
  }

  @Test
  void anEndedCallHandsItsSlotToTheFirstWaitingCallOfItsCaller() {
    CallLimiter limiter = limiter(1, 10, 60_000);
    Admission first = admitted(limiter.admit("a", new Cancellation()));
    Future<Admission> second = limiter.admit("a", new Cancellation());
    Future<Admission> third = limiter.admit("a", new Cancellation());
    first.release().run();
    assertTrue(second.succeeded() && !second.result().refused());
    assertFalse(third.isComplete(), "first come, first served");
    first.release().run();
    assertFalse(third.isComplete(), "a release run twice freed a second slot");
    second.result().release().run();
    assertTrue(third.succeeded());
  }

  @Test
  void aCallThatFindsTheQueueFullIsRefusedAtOnceNamingTheCap() {
    CallLimiter limiter = limiter(1, 1, 60_000);
    admitted(limiter.admit("a", new Cancellation()));
    assertFalse(limiter.admit("a", new Cancellation()).isComplete());
    Future<Admission> refused = limiter.admit("a", new Cancellation());
    assertTrue(refused.succeeded() && refused.result().refused(), "answered at once");
    assertEquals(ErrorCode.UNAVAILABLE, refused.result().refusal().code());
    assertEquals(1, refused.result().refusal().details().getInteger("max_concurrent_calls"));
    assertTrue(refused.result().refusal().getMessage().contains("1 more are waiting"), refused.result().refusal().getMessage());
  }

  @Test
  void aCallThatWaitsPastTheQueueTimeoutIsRefusedAndLeavesTheQueue() throws Exception {
    CallLimiter limiter = limiter(1, 1, 100);
    Admission running = admitted(limiter.admit("a", new Cancellation()));
    Admission late = answer(limiter.admit("a", new Cancellation()));
    assertTrue(late.refused());
    assertTrue(late.refusal().getMessage().contains("waited 100 ms"), late.refusal().getMessage());
    // its place in the queue is free again: one more may wait
    Future<Admission> next = limiter.admit("a", new Cancellation());
    assertFalse(next.isComplete());
    running.release().run();
    assertTrue(next.succeeded() && !next.result().refused());
  }

  @Test
  void aCallCancelledWhileItWaitsLeavesTheQueueAndIsNeverRun() throws Exception {
    CallLimiter limiter = limiter(1, 5, 60_000);
    Admission running = admitted(limiter.admit("a", new Cancellation()));
    Cancellation cancellation = new Cancellation();
    Future<Admission> cancelled = limiter.admit("a", cancellation);
    Future<Admission> after = limiter.admit("a", new Cancellation());
    cancellation.cancel();
    Admission answer = answer(cancelled);
    assertTrue(answer.refused());
    assertTrue(answer.refusal().getMessage().contains("cancelled"), answer.refusal().getMessage());
    running.release().run();
    assertTrue(after.succeeded() && !after.result().refused(), "the slot went to the call behind the cancelled one");
  }

  /** Many threads admit and end calls of several callers at once: no caller ever runs more than its cap, and every call is answered. */
  @Test
  void underConcurrentCallsNoCallerPassesItsCapAndEveryCallIsAnswered() throws Exception {
    int cap = 3;
    int callers = 4;
    int callsEach = 300;
    CallLimiter limiter = limiter(cap, callsEach, 60_000);
    AtomicInteger[] running = new AtomicInteger[callers];
    ConcurrentLinkedQueue<String> faults = new ConcurrentLinkedQueue<>();
    CountDownLatch answered = new CountDownLatch(callers * callsEach);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    ExecutorService enders = Executors.newFixedThreadPool(4);
    try {
      for (int c = 0; c < callers; c++) {
        running[c] = new AtomicInteger();
        int caller = c;
        for (int i = 0; i < callsEach; i++) {
          threads.execute(() -> limiter.admit("caller-" + caller, new Cancellation()).onSuccess(admission -> {
            if (admission.refused()) {
              faults.add("refused: " + admission.refusal().getMessage());
              answered.countDown();
              return;
            }
            int now = running[caller].incrementAndGet();
            if (now > cap) {
              faults.add("caller-" + caller + " ran " + now);
            }
            enders.execute(() -> {
              running[caller].decrementAndGet();
              admission.release().run();
              answered.countDown();
            });
          }));
        }
      }
      assertTrue(answered.await(60, TimeUnit.SECONDS), "calls never answered: " + answered.getCount());
    } finally {
      threads.shutdownNow();
      enders.shutdownNow();
    }
    List<String> seen = new ArrayList<>(faults);
    assertTrue(seen.isEmpty(), seen::toString);
    // every slot came back: each caller may run its cap again at once
    for (int c = 0; c < callers; c++) {
      for (int i = 0; i < cap; i++) {
        admitted(limiter.admit("caller-" + c, new Cancellation()));
      }
    }
  }
}
