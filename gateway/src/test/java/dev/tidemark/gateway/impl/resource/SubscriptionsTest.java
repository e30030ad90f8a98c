package dev.tidemark.gateway.impl.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.session.EventLog;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.shareddata.AsyncMap;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Which subscribed resources a gateway knows of, on one Vert.x instance's shared data and event
 * bus, which have the cluster map's and the cluster bus's operations: each Subscriptions is a gateway.
 */
class SubscriptionsTest {

  private static final String DB = "main";
  private static final String TABLE = "tidemark://table/public.orders";
  private static final String ROW = "tidemark://row/public.orders/7";

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private Subscriptions gateway() {
    Subscriptions s = new Subscriptions(vertx, new EventLog(vertx));
    s.start().await();
    return s;
  }

  @Test
  void aGatewayThatKnowsOfNoSubscriptionReadsNothingForAChange() {
    Subscriptions a = gateway();
    assertTrue(a.noneKnown());
    assertEquals(List.of(), a.subscribed(DB, List.of(TABLE, ROW)).await());
  }

  @Test
  void aGatewayStartedAfterASubscriptionKnowsItFromTheIndex() {
    Subscriptions a = gateway();
    a.add(DB, TABLE, Subscriptions.sessionTarget("s1", TABLE)).await();
    Subscriptions b = gateway();
    assertFalse(b.noneKnown());
    assertEquals(List.of(TABLE), b.subscribed(DB, List.of(TABLE, ROW)).await());
  }

  @Test
  void aChangeWithOneKnownResourceIsReadForAllOfThem() {
    Subscriptions a = gateway();
    a.add(DB, TABLE, Subscriptions.sessionTarget("s1", TABLE)).await();
    // a subscription this gateway has not heard of: written to the map without its publication
    AsyncMap<String, JsonArray> map = vertx.sharedData().<String, JsonArray>getAsyncMap(Addresses.SUBSCRIPTIONS_MAP).await();
    map.put(DB + "|" + ROW, new JsonArray().add(Subscriptions.sessionTarget("s2", ROW))).await();
    assertEquals(List.of(TABLE, ROW), a.subscribed(DB, List.of(TABLE, ROW)).await(),
        "the gateway that claims the change announces the row too");
  }

  @Test
  void theLastSubscriberToLeaveTakesTheKeyOutOfTheIndex() {
    Subscriptions a = gateway();
    a.add(DB, TABLE, Subscriptions.sessionTarget("s1", TABLE)).await();
    a.add(DB, TABLE, Subscriptions.sessionTarget("s2", TABLE)).await();
    a.remove(DB, TABLE, Subscriptions.sessionTarget("s1", TABLE)).await();
    assertFalse(gateway().noneKnown(), "one subscriber is left");
    a.remove(DB, TABLE, Subscriptions.sessionTarget("s2", TABLE)).await();
    assertTrue(gateway().noneKnown(), "a gateway that starts now finds nothing in the index");
  }

  @Test
  void aSubscribeListsItsKeyInTheIndexEvenWhenItsListWasThereBefore() {
    Subscriptions a = gateway();
    // a list left by an add that failed before it reached the index
    AsyncMap<String, JsonArray> map = vertx.sharedData().<String, JsonArray>getAsyncMap(Addresses.SUBSCRIPTIONS_MAP).await();
    map.put(DB + "|" + TABLE, new JsonArray().add(Subscriptions.sessionTarget("s1", TABLE))).await();
    a.add(DB, TABLE, Subscriptions.sessionTarget("s1", TABLE)).await();  // the retried subscribe
    assertFalse(gateway().noneKnown());
  }
}
