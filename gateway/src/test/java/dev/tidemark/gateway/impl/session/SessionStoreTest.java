package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Revocation;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.Addresses;
import dev.tidemark.testsupport.Threads;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Sessions in the cluster map and each gateway's copies of the ones it served, on a Vert.x of its
 * own: its shared data stands for the cluster's, and two stores on it for two gateways.
 */
class SessionStoreTest {

  private final Vertx vertx = Vertx.vertx();
  private final Revocations revocations = new Revocations();
  private final SessionStore store = new SessionStore(vertx, revocations);

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.await(10, TimeUnit.SECONDS);
  }

  private String open(SessionStore on, String caller) throws Exception {
    return await(on.create(new Caller(caller, caller, "reader", Access.READ_ONLY, List.of("*")), "main", "2025-11-25", null, null));
  }

  @Test
  void aSessionIsFoundByItsOwnCallerOnItsOwnDatabaseOnly() throws Exception {
    String id = open(store, "alice");
    assertEquals("alice", await(store.find(id, "alice", "main")).getString("caller_id"));
    // the second find is served from this gateway's copy, with the same checks
    assertNotNull(await(store.find(id, "alice", "main")));
    assertNull(await(store.find(id, "bob", "main")));
    assertNull(await(store.find(id, "alice", "sales")));
    assertNull(await(store.find("0".repeat(32), "alice", "main")));
  }

  @Test
  void aRevocationEndsTheSessionsOpenedBeforeItEvenInACopy() throws Exception {
    String id = open(store, "alice");
    long openedAt = await(store.find(id, "alice", "main")).getLong("created_at");
    revocations.note(new Revocation("alice", openedAt));
    assertNull(await(store.find(id, "alice", "main")));
    // one opened since is refused only when it was opened in the revocation's millisecond
    String later = open(store, "alice");
    boolean afterIt = await(store.get(later)).getLong("created_at") > openedAt;
    assertEquals(afterIt, await(store.find(later, "alice", "main")) != null);
  }

  @Test
  void onlyItsCallerEndsASessionAndThenThisGatewaysCopyIsGoneToo() throws Exception {
    String id = open(store, "alice");
    assertNotNull(await(store.find(id, "alice", "main")));
    assertFalse(await(store.delete(id, "bob")));
    assertNotNull(await(store.find(id, "alice", "main")));
    assertTrue(await(store.delete(id, "alice")));
    assertNull(await(store.find(id, "alice", "main")));
    assertNull(await(store.get(id)));
  }

  @Test
  void aChangeOnOneGatewayDropsTheOthersCopy() throws Exception {
    Context context = vertx.getOrCreateContext();
    SessionStore other = new SessionStore(vertx, revocations);
    Promise<Void> heard = Promise.promise();
    // both registered on one context, the store's first: when the probe hears the change, the store has
    await(Future.<Void>future(p -> context.runOnContext(v -> store.start()
        .compose(x -> vertx.eventBus().consumer(Addresses.SESSION_CHANGED_V1, msg -> heard.tryComplete()).completion())
        .onComplete(p))));
    await(other.start());
    String id = open(other, "alice");
    assertNull(await(store.find(id, "alice", "main")).getString("log_level"));
    await(other.update(id, "log_level", "debug"));
    await(heard.future());
    assertEquals("debug", await(store.find(id, "alice", "main")).getString("log_level"), "the copy was dropped, the map read");
  }

  @Test
  void aSessionEndedWhileRequestsOnOtherThreadsFindItIsNotFoundAfterwards() throws Exception {
    int rounds = 300;
    int finders = 3;
    List<String> stillFound = new ArrayList<>();
    try (Threads threads = new Threads(finders + 1)) {
      for (int round = 0; round < rounds; round++) {
        String id = open(store, "alice");
        List<Callable<Future<?>>> work = new ArrayList<>();
        for (int f = 0; f < finders; f++) {
          work.add(() -> store.find(id, "alice", "main"));
        }
        work.add(() -> store.delete(id, "alice"));
        for (Future<?> done : threads.run(work)) {
          await(done);
        }
        if (await(store.find(id, "alice", "main")) != null) {
          stillFound.add(id);
        }
      }
    }
    assertEquals(List.of(), stillFound, "sessions found after they ended");
  }
}
