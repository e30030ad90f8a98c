package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
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

/** The share of a role's pool each caller gets: the cap, the turns between callers, the refusal and its figures. */
class FairShareTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static Runnable granted(Future<Runnable> f) {
    assertTrue(f.succeeded(), () -> "not granted at once: " + f);
    return f.result();
  }

  @Test
  void aCallerPastItsShareWaitsWhileAnotherCallerIsServedAtOnce() {
    FairShare share = new FairShare(vertx, "callers", 4, 2, 60_000, 5_000);
    granted(share.acquire("flood"));
    granted(share.acquire("flood"));
    Future<Runnable> third = share.acquire("flood");
    assertFalse(third.isComplete(), "a third connection for one caller whose share is two");
    granted(share.acquire("other"));
    granted(share.acquire("other"));
    assertEquals(4, share.held());
    assertEquals(2, share.heldBy("flood"));
    assertEquals(1, share.waiting());
  }

  @Test
  void freeConnectionsGoToTheWaitingCallersInTurnNotToTheOneWithMostCallsWaiting() {
    FairShare share = new FairShare(vertx, "callers", 2, 2, 60_000, 5_000);
    Runnable a1 = granted(share.acquire("a"));
    Runnable a2 = granted(share.acquire("a"));
    List<Future<Runnable>> floodWaits = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      floodWaits.add(share.acquire("a"));
    }
    Future<Runnable> b = share.acquire("b");
    Future<Runnable> c = share.acquire("c");
    a1.run();
    // the turns go a, b, c, a, ...: a waited first, so it goes first, once
    assertTrue(floodWaits.get(0).succeeded());
    assertFalse(b.isComplete());
    a2.run();
    assertTrue(b.succeeded(), "b's one call, behind four more of a's, gets the next connection");
    floodWaits.get(0).result().run();
    assertTrue(c.succeeded(), "then c's");
    assertTrue(floodWaits.stream().skip(1).noneMatch(Future::isComplete), "a went a second time before b and c went once");
    b.result().run();
    assertTrue(floodWaits.get(1).succeeded(), "then a again");
  }

  @Test
  void aCallerAtItsShareIsPassedOverWhileItsOwnCallsHoldThePool() {
    FairShare share = new FairShare(vertx, "callers", 3, 2, 60_000, 5_000);
    Runnable a1 = granted(share.acquire("a"));
    granted(share.acquire("a"));
    Runnable b1 = granted(share.acquire("b"));
    Future<Runnable> a3 = share.acquire("a");
    Future<Runnable> b2 = share.acquire("b");
    b1.run();
    assertFalse(a3.isComplete(), "a holds its share of two");
    assertTrue(b2.succeeded(), "the free connection goes to b, which waited after a");
    a1.run();
    assertTrue(a3.succeeded());
  }

  @Test
  void aReleaseRunTwiceGivesBackOneConnection() {
    FairShare share = new FairShare(vertx, "callers", 1, 1, 60_000, 5_000);
    Runnable release = granted(share.acquire("a"));
    Future<Runnable> next = share.acquire("b");
    Future<Runnable> after = share.acquire("c");
    release.run();
    release.run();
    assertTrue(next.succeeded());
    assertFalse(after.isComplete(), "a second run of one release let a second call in");
    assertEquals(1, share.held());
  }

  @Test
  void theRefusalOfACallerAtItsShareNamesTheShare() throws Exception {
    FairShare share = new FairShare(vertx, "callers", 4, 2, 200, 5_000);
    granted(share.acquire("flood"));
    granted(share.acquire("flood"));
    ToolException refusal = refusal(share.acquire("flood"));
    assertEquals(ErrorCode.UNAVAILABLE, refusal.code());
    assertTrue(refusal.code().retriable());
    JsonObject details = refusal.details();
    assertEquals("connection", details.getString("waited_for"));
    assertEquals(FairShare.SHARE_LIMIT, details.getString("limit"));
    assertEquals(2, details.getInteger("max_connections"));
    long retry = details.getLong("retry_after_ms");
    assertTrue(retry > 4_000 && retry <= 5_000, "the oldest of its statements ends by the timeout: " + retry);
    assertTrue(refusal.getMessage().contains("database.caller-share-percent") && refusal.getMessage().contains("did not start"),
        refusal.getMessage());
    assertEquals(0, share.waiting(), "the refused call left the queue");
  }

  @Test
  void theRefusalOfACallerUnderItsShareInAFullPoolNamesThePool() throws Exception {
    FairShare share = new FairShare(vertx, "callers", 2, 1, 200, 5_000);
    granted(share.acquire("a"));
    granted(share.acquire("b"));
    ToolException refusal = refusal(share.acquire("c"));
    assertEquals(FairShare.POOL_LIMIT, refusal.details().getString("limit"));
    assertEquals(2, refusal.details().getInteger("max_connections"));
  }

  private static ToolException refusal(Future<Runnable> f) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    f.onComplete(x -> done.countDown());
    assertTrue(done.await(10, TimeUnit.SECONDS), "no answer");
    assertTrue(f.failed(), "granted: " + f);
    return assertInstanceOf(ToolException.class, f.cause());
  }

  /**
   * Many threads take and give back turns of several callers at once: no caller ever holds more
   * than its share, the pool never more than its size, and every call is served in the end.
   */
  @Test
  void underConcurrentCallsNoCallerPassesItsShareAndNoCallIsLost() throws Exception {
    int connections = 6;
    int perCaller = 2;
    int callers = 5;
    int callsEach = 400;
    FairShare share = new FairShare(vertx, "callers", connections, perCaller, 60_000, 5_000);
    AtomicInteger[] holding = new AtomicInteger[callers];
    AtomicInteger total = new AtomicInteger();
    ConcurrentLinkedQueue<String> faults = new ConcurrentLinkedQueue<>();
    CountDownLatch served = new CountDownLatch(callers * callsEach);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    ExecutorService releasers = Executors.newFixedThreadPool(4);
    try {
      for (int c = 0; c < callers; c++) {
        holding[c] = new AtomicInteger();
        int caller = c;
        for (int i = 0; i < callsEach; i++) {
          threads.execute(() -> share.acquire("caller-" + caller).onSuccess(release -> {
            int mine = holding[caller].incrementAndGet();
            int all = total.incrementAndGet();
            if (mine > perCaller) {
              faults.add("caller-" + caller + " held " + mine);
            }
            if (all > connections) {
              faults.add("the pool held " + all);
            }
            releasers.execute(() -> {
              holding[caller].decrementAndGet();
              total.decrementAndGet();
              release.run();
              served.countDown();
            });
          }).onFailure(err -> faults.add("refused: " + err.getMessage())));
        }
      }
      assertTrue(served.await(60, TimeUnit.SECONDS), "calls left unserved: " + served.getCount() + ", faults " + faults);
    } finally {
      threads.shutdownNow();
      releasers.shutdownNow();
    }
    assertTrue(faults.isEmpty(), faults::toString);
    assertEquals(0, share.held());
    assertEquals(0, share.waiting());
  }
}
