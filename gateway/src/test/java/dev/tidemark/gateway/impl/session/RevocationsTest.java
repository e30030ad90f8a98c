package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Revocation;
import dev.tidemark.testsupport.Threads;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The revocations a node heard, written by its one listener and read by every gateway instance. */
class RevocationsTest {

  private static final long T0 = 1_800_000_000_000L;

  private final AtomicLong millis = new AtomicLong(T0);
  private final AtomicLong nanos = new AtomicLong(5_000);
  private final Revocations revocations = new Revocations(millis::get, nanos::get);

  @Test
  void aSessionOpenedUpToTheRevocationEndsAndALaterOneOrAnotherCallersStays() {
    revocations.note(new Revocation("alice", T0));
    assertTrue(revocations.endedSession("alice", T0 - 60_000));
    assertTrue(revocations.endedSession("alice", T0), "opened in the revocation's millisecond: refused, and opened again");
    assertFalse(revocations.endedSession("alice", T0 + 1));
    assertFalse(revocations.endedSession("bob", T0 - 60_000));
  }

  @Test
  void anOlderRevocationHeardLastDoesNotShortenALaterOne() {
    revocations.note(new Revocation("alice", T0 + 500));
    revocations.note(new Revocation("alice", T0));
    assertTrue(revocations.endedSession("alice", T0 + 400));
  }

  @Test
  void heardSinceComparesWithWhenThisGatewayHeardIt() {
    long checkedBefore = nanos.get();
    nanos.addAndGet(1_000);
    revocations.note(new Revocation("alice", T0));
    long checkedAfter = nanos.addAndGet(1_000);
    assertTrue(revocations.heardSince("alice", checkedBefore), "a request checked before the revocation was heard");
    assertFalse(revocations.heardSince("alice", checkedAfter));
    assertFalse(revocations.heardSince("bob", checkedBefore));
  }

  @Test
  void aRevocationIsForgottenOnceEverySessionOpenedBeforeItHasEnded() {
    revocations.note(new Revocation("alice", T0));
    millis.addAndGet(Revocations.KEEP_MILLIS);
    revocations.note(new Revocation("bob", millis.get()));
    assertTrue(revocations.endedSession("alice", T0 - 1), "kept for KEEP_MILLIS");
    millis.incrementAndGet();
    revocations.note(new Revocation("bob", millis.get()));
    assertFalse(revocations.endedSession("alice", T0 - 1), "dropped past KEEP_MILLIS, when the next revocation is noted");
    assertTrue(revocations.endedSession("bob", millis.get()));
  }

  @Test
  void revocationsNotedOnManyThreadsInAnyOrderKeepEachCallersLatest() throws Exception {
    int threads = 8;
    int callers = 200;
    int perCaller = 40;
    // every (caller, time) pair, spread over the threads in a shuffled order
    List<Revocation> all = new ArrayList<>();
    for (int c = 0; c < callers; c++) {
      for (int i = 0; i < perCaller; i++) {
        all.add(new Revocation("caller-" + c, T0 + i));
      }
    }
    Collections.shuffle(all, new Random(42));
    List<Callable<Void>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      List<Revocation> mine = all.subList(t * all.size() / threads, (t + 1) * all.size() / threads);
      work.add(() -> {
        mine.forEach(revocations::note);
        return null;
      });
    }
    Threads.together(work);
    for (int c = 0; c < callers; c++) {
      assertTrue(revocations.endedSession("caller-" + c, T0 + perCaller - 1), "caller-" + c + " keeps its latest revocation");
      assertFalse(revocations.endedSession("caller-" + c, T0 + perCaller));
    }
  }
}
