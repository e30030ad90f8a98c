package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Revocation;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
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
    assertTrue(revocations.endedSession("alice", T0 - 60_000, 0));
    assertTrue(revocations.endedSession("alice", T0, 0), "opened in the revocation's millisecond: refused, and opened again");
    assertFalse(revocations.endedSession("alice", T0 + 1, 0));
    assertFalse(revocations.endedSession("bob", T0 - 60_000, 0));
  }

  @Test
  void anOlderRevocationHeardLastDoesNotShortenALaterOne() {
    revocations.note(new Revocation("alice", T0 + 500));
    revocations.note(new Revocation("alice", T0));
    assertTrue(revocations.endedSession("alice", T0 + 400, 0));
  }

  @Test
  void heardSinceComparesWithWhenThisGatewayHeardIt() {
    long checkedBefore = nanos.get();
    nanos.addAndGet(1_000);
    revocations.note(new Revocation("alice", T0));
    long checkedAfter = nanos.addAndGet(1_000);
    assertTrue(revocations.heardSince(caller("alice", 0), checkedBefore), "a request checked before the revocation was heard");
    assertFalse(revocations.heardSince(caller("alice", 0), checkedAfter));
    assertFalse(revocations.heardSince(caller("bob", 0), checkedBefore));
  }

  @Test
  void aTokenMadeAgainUnderTheNameIsNotRefusedWhenTheOldOnesEndIsHeardLate() {
    long checked = nanos.get();
    nanos.addAndGet(1_000);
    // made again at T0: the old token's end, at T0, is heard after the new token was checked
    revocations.note(new Revocation("alice", T0));
    assertFalse(revocations.heardSince(caller("alice", T0), checked), "the new token, valid since T0");
    assertTrue(revocations.heardSince(caller("alice", T0 - 1), checked), "a row read before the new token was made");
    nanos.addAndGet(1_000);
    revocations.note(new Revocation("alice", T0 + 1));
    assertTrue(revocations.heardSince(caller("alice", T0), checked), "the new token's own revocation");
  }

  @Test
  void aSessionOpenedWithTheTokenThatReplacedTheRevokedOneStaysWhateverTheOpeningGatewaysClock() {
    revocations.note(new Revocation("alice", T0));
    assertTrue(revocations.endedSession("alice", T0 - 5, 0), "opened with the old token");
    assertFalse(revocations.endedSession("alice", T0 - 5, T0), "opened with the new token by a gateway whose clock is 5 ms behind");
    revocations.note(new Revocation("alice", T0 + 100));
    assertTrue(revocations.endedSession("alice", T0 + 50, T0), "the new token's own revocation ends it");
  }

  private static Caller caller(String id, long validSince) {
    return new Caller(id, id, "reader", Access.READ_ONLY, List.of("*"), validSince);
  }

  @Test
  void aRevocationIsForgottenOnceEverySessionOpenedBeforeItHasEnded() {
    revocations.note(new Revocation("alice", T0));
    millis.addAndGet(Revocations.KEEP_MILLIS);
    revocations.note(new Revocation("bob", millis.get()));
    assertTrue(revocations.endedSession("alice", T0 - 1, 0), "kept for KEEP_MILLIS");
    millis.incrementAndGet();
    revocations.note(new Revocation("bob", millis.get()));
    assertFalse(revocations.endedSession("alice", T0 - 1, 0), "dropped past KEEP_MILLIS, when the next revocation is noted");
    assertTrue(revocations.endedSession("bob", millis.get(), 0));
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
      assertTrue(revocations.endedSession("caller-" + c, T0 + perCaller - 1, 0), "caller-" + c + " keeps its latest revocation");
      assertFalse(revocations.endedSession("caller-" + c, T0 + perCaller, 0));
    }
  }
}
