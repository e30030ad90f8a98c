package dev.tidemark.gateway.impl.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Revocation;
import dev.tidemark.gateway.impl.session.Revocations;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class InFlightTest {

  private final List<String> ended = new ArrayList<>();
  private final InFlight inFlight = new InFlight(null, new Revocations());

  private InFlight.Held held(String caller, String name) {
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
    InFlight.Held call = new InFlight.Held("alice", () -> {}, () -> inFlight.releaseCall("k"));
    assertFalse(inFlight.holdCall("k", call, checkedAt));
    assertTrue(inFlight.holdCall("k-bob", held("bob", "call"), checkedAt));
  }

  @Test
  void aCallIsReleasedOnceSoThatOnlyOneEndingAnswersIt() {
    inFlight.holdCall("k", held("alice", "call"), System.nanoTime());
    assertTrue(inFlight.releaseCall("k"));
    assertFalse(inFlight.releaseCall("k"));
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
