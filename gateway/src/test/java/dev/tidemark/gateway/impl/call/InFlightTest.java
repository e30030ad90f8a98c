package dev.tidemark.gateway.impl.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Revocation;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.EventLoops;
import dev.tidemark.gateway.impl.session.Revocations;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InFlightTest {

  private final List<String> ended = new ArrayList<>();
  private final InFlight inFlight = new InFlight(null, new Revocations());

  /** A caller of a Tidemark token that replaced none under its name. */
  static Caller caller(String id) {
    return caller(id, 0);
  }

  static Caller caller(String id, long validSince) {
    return new Caller(id, id, "reader", Access.READ_ONLY, List.of("*"), validSince);
  }

  private InFlight.Held held(String caller, String name) {
    return held(caller(caller), name);
  }

  private InFlight.Held held(Caller caller, String name) {
    return new InFlight.Held(caller, () -> ended.add("stop " + name), () -> ended.add("revoke " + name));
  }

  @Test
  void aRevocationEndsOnlyWhatItsCallerHolds() {
    long now = System.nanoTime();
    assertTrue(inFlight.holdCall("k1", held("alice", "call"), now));
    inFlight.holdStream("s1", held("alice", "stream"), now);
    assertTrue(inFlight.holdCall("k2", held("bob", "call"), now));
    inFlight.revoked(new Revocation("alice", System.currentTimeMillis()));
    assertEquals(List.of("revoke stream", "revoke call"), ended);
  }

  @Test
  void aCallWhoseCredentialsPredateAHeardRevocationEndsAtOnce() {
    long checkedAt = System.nanoTime();
    inFlight.revoked(new Revocation("alice", System.currentTimeMillis()));
    InFlight.Held call = new InFlight.Held(caller("alice"), () -> {}, () -> inFlight.releaseCall("k"));
    assertFalse(inFlight.holdCall("k", call, checkedAt));
    assertTrue(inFlight.holdCall("k-bob", held("bob", "call"), checkedAt));
  }

  @Test
  void theRevocationOfATokenReplacedUnderTheSameNameEndsNothingOfTheNewOne() {
    long remadeAt = System.currentTimeMillis();
    long checkedAt = System.nanoTime();
    assertTrue(inFlight.holdCall("old", held(caller("alice", 0), "old call"), checkedAt));
    assertTrue(inFlight.holdCall("new", held(caller("alice", remadeAt), "new call"), checkedAt));
    // the notice of the old token's end, heard after the new token's call began
    inFlight.revoked(new Revocation("alice", remadeAt));
    assertEquals(List.of("revoke old call"), ended);
    inFlight.releaseCall("old"); // as its revoke answer does
    assertTrue(inFlight.holdCall("new 2", held(caller("alice", remadeAt), "second new call"), checkedAt),
        "a new token's call checked before the late notice is held");
    ended.clear();
    inFlight.revoked(new Revocation("alice", remadeAt + 1));
    assertEquals(Set.of("revoke new call", "revoke second new call"), Set.copyOf(ended), "the new token's own revocation ends them");
  }

  @Test
  void aCallIsReleasedOnceSoThatOnlyOneEndingAnswersIt() {
    inFlight.holdCall("k", held("alice", "call"), System.nanoTime());
    assertTrue(inFlight.releaseCall("k"));
    assertFalse(inFlight.releaseCall("k"));
  }

  @Test
  void aRevocationAndADrainHeardOnOneLoopEndEachStreamAndCallOnTheLoopThatHoldsIt() throws Exception {
    try (EventLoops el = new EventLoops(3)) {
      InFlight shared = new InFlight(el.vertx(), new Revocations());
      java.util.concurrent.ConcurrentLinkedQueue<String> endings = new java.util.concurrent.ConcurrentLinkedQueue<>();
      java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(4);
      // loops 1 and 2 each hold a stream of alice's, and loop 2 a call of bob's
      for (int loop : new int[] {1, 2}) {
        el.run(loop, () -> shared.holdStream("s" + loop, new InFlight.Held(caller("alice"), () -> {}, () -> {
          endings.add("revoke s" + loop + " on " + el.current());
          ended.countDown();
        }, () -> {
          endings.add("drain s" + loop + " on " + el.current());
          ended.countDown();
        }), System.nanoTime())).get(10, TimeUnit.SECONDS);
      }
      el.run(2, () -> shared.holdCall("c", new InFlight.Held(caller("bob"), () -> {}, () -> {}, () -> {
        endings.add("drain c on " + el.current());
        ended.countDown();
      }), System.nanoTime())).get(10, TimeUnit.SECONDS);
      // the node hears both on its own loop, 0
      el.run(0, () -> shared.revoked(new Revocation("alice", System.currentTimeMillis()))).get(10, TimeUnit.SECONDS);
      el.run(0, () -> shared.releaseStream("s1")).get(10, TimeUnit.SECONDS);
      el.run(0, shared::endForDrain).get(10, TimeUnit.SECONDS);
      assertTrue(ended.await(10, TimeUnit.SECONDS), endings.toString());
      assertEquals(java.util.Set.of("revoke s1 on 1", "revoke s2 on 2", "drain s2 on 2", "drain c on 2"), java.util.Set.copyOf(endings));
    }
  }

  @Test
  void anInstanceThatStopsEndsOnlyTheStreamsItHolds() throws Exception {
    try (EventLoops el = new EventLoops(2)) {
      InFlight shared = new InFlight(el.vertx(), new Revocations());
      java.util.concurrent.ConcurrentLinkedQueue<String> stopped = new java.util.concurrent.ConcurrentLinkedQueue<>();
      for (int loop = 0; loop < 2; loop++) {
        int l = loop;
        el.run(l, () -> shared.holdStream("s" + l, new InFlight.Held(caller("alice"), () -> stopped.add("s" + l + " on " + el.current()), () -> {}),
            System.nanoTime())).get(10, TimeUnit.SECONDS);
      }
      el.run(1, () -> shared.stopStreamsOf(el.context(1))).get(10, TimeUnit.SECONDS);
      assertEquals(List.of("s1 on 1"), List.copyOf(stopped));
      assertEquals(2, shared.streamCount(), "a stream is let go by its own cleanup, not by the stop");
    }
  }

  @Test
  void twoCallsSentWithOneIdInOneSessionAreHeldApartAndACancellationStopsBoth() {
    long now = System.nanoTime();
    String first = InFlight.heldKey("s|1", 1);
    String second = InFlight.heldKey("s|1", 2);
    String other = InFlight.heldKey("s|11", 3);
    inFlight.holdCall(first, held("alice", "first"), now);
    inFlight.holdCall(second, held("alice", "second"), now);
    inFlight.holdCall(other, held("alice", "other"), now);
    assertEquals(3, inFlight.callCount(), "neither hides the other");
    inFlight.cancel("s|1");
    assertEquals(List.of("stop first", "stop second"), ended.stream().sorted().toList());
    assertFalse(inFlight.releaseCall(first), "a cancelled call gets no answer");
    assertTrue(inFlight.releaseCall(other), "a call whose id only starts alike goes on");
  }

  @Test
  void stoppingTheNodeStopsStreamsButNotCalls() {
    long now = System.nanoTime();
    inFlight.holdCall("k", held("alice", "call"), now);
    inFlight.holdStream("s", held("alice", "stream"), now);
    inFlight.stopStreams();
    assertEquals(List.of("stop stream"), ended);
  }
}
