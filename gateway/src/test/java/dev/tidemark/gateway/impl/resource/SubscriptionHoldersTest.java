package dev.tidemark.gateway.impl.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.tidemark.config.TidemarkConfig.SubscriptionLimits;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Each caller's subscriptions against its limits, on a single Vert.x instance's shared data (which has the cluster map's operations). */
class SubscriptionHoldersTest {

  private final Vertx vertx = Vertx.vertx();
  private final Set<String> liveSessions = ConcurrentHashMap.newKeySet();
  private final List<String> unsubscribed = new ArrayList<>();
  private final AtomicLong now = new AtomicLong(1_000_000);
  private final SubscriptionHolders holders = new SubscriptionHolders(vertx, new SubscriptionLimits(2, 3),
      id -> Future.succeededFuture(liveSessions.contains(id)),
      (session, held) -> {
        held.forEach(h -> unsubscribed.add(session + " " + h.uri()));
        return Future.succeededFuture();
      }, now::get);

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static SubscriptionHolders.Held row(int id) {
    return new SubscriptionHolders.Held("main", "tidemark://row/public.t/" + id, "tidemark://row/t/" + id);
  }

  private static JsonObject refused(Future<?> attempt) {
    RpcFailure f = assertThrows(RpcFailure.class, attempt::await);
    assertEquals(JsonRpc.LIMIT_EXCEEDED, f.code());
    return f.data();
  }

  @Test
  void aSessionHoldsAtMostItsLimitAndTheSameSubscriptionCountsOnce() {
    liveSessions.add("s1");
    assertEquals(true, holders.addForSession("c", "s1", row(1)).await());
    assertEquals(false, holders.addForSession("c", "s1", row(1)).await(), "subscribing again changes nothing");
    assertEquals(true, holders.addForSession("c", "s1", row(2)).await());
    JsonObject data = refused(holders.addForSession("c", "s1", row(3)));
    assertEquals("resources.max-subscriptions-per-session", data.getString("limit"));
    assertEquals(2, data.getInteger("max"));
    assertEquals("LIMIT_EXCEEDED", data.getString("code"));
    holders.removeForSession("c", "s1", row(1)).await();
    assertEquals(true, holders.addForSession("c", "s1", row(3)).await(), "an unsubscribe makes room");
  }

  @Test
  void aCallerHoldsAtMostItsLimitAcrossItsSessionsAndListenStreamsAndOtherCallersAreNotCounted() {
    liveSessions.addAll(List.of("s1", "s2"));
    holders.addForSession("c", "s1", row(1)).await();
    holders.addForSession("c", "s2", row(1)).await();
    holders.addForSession("c", "s2", row(2)).await();
    assertEquals("resources.max-subscriptions-per-caller", refused(holders.addForSession("c", "s1", row(2))).getString("limit"));
    assertEquals("resources.max-subscriptions-per-caller", refused(holders.holdListen("c", "l1", 1)).getString("limit"));
    assertEquals(true, holders.addForSession("other", "s3", row(1)).await(), "another caller has limits of its own");
    assertEquals(List.of(row(1), row(2)), holders.endSession("c", "s2").await(), "an ended session gives back what it held");
    holders.holdListen("c", "l1", 2).await();
    refused(holders.addForSession("c", "s1", row(2)));
    holders.releaseListen("c", "l1").await();
    assertEquals(true, holders.addForSession("c", "s1", row(2)).await());
  }

  @Test
  void aListenStreamNamingMoreThanASessionMayHoldIsRefusedWhateverTheCallerHasLeft() {
    assertEquals("resources.max-subscriptions-per-session", refused(holders.holdListen("c", "l1", 3)).getString("limit"));
  }

  @Test
  void sessionsThatExpiredAndListenStreamsWhoseGatewayStoppedRenewingThemStopCountingWhenTheLimitIsReached() {
    liveSessions.add("gone");
    holders.addForSession("c", "gone", row(1)).await();
    holders.addForSession("c", "gone", row(2)).await();
    holders.holdListen("c", "l1", 1).await();
    liveSessions.remove("gone"); // expired, without a DELETE
    liveSessions.add("s2");
    assertEquals(true, holders.addForSession("c", "s2", row(1)).await(), "the session that is gone no longer counts");
    assertEquals(List.of("gone tidemark://row/t/1", "gone tidemark://row/t/2"), unsubscribed, "and its subscriptions leave the map");
    holders.addForSession("c", "s2", row(2)).await();
    assertEquals("resources.max-subscriptions-per-caller", refused(holders.holdListen("c", "l2", 1)).getString("limit"),
        "a listen stream counts while its lease runs");
    holders.renewListen("c", "l1").await();
    now.addAndGet(SubscriptionHolders.LISTEN_LEASE_MILLIS - 1);
    refused(holders.holdListen("c", "l2", 1));
    now.addAndGet(2);
    holders.holdListen("c", "l2", 1).await();
  }
}
