package dev.tidemark.gateway.impl.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.session.EventId;
import dev.tidemark.gateway.impl.session.EventLog;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The order a GET stream sends its events in, against the event log on a single Vert.x instance's
 * shared data (which has the cluster map's operations): live events that arrive out of order, that
 * never arrive, or that were sent already.
 */
class GetCursorTest {

  private final Vertx vertx = Vertx.vertx();
  private final Context context = vertx.getOrCreateContext();
  private final EventLog log = new EventLog(vertx);
  private final List<Long> sent = new ArrayList<>();
  private GetCursor cursor;

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static JsonObject message(long seq) {
    return new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/resources/updated")
        .put("params", new JsonObject().put("uri", "tidemark://table/t" + seq));
  }

  /** Runs {@code step} on the cursor's context, as the stream's consumer and timers do, and waits for it. */
  private <T> T on(Supplier<T> step) {
    Promise<T> done = Promise.promise();
    context.runOnContext(v -> done.complete(step.get()));
    return done.future().await();
  }

  private long store() {
    EventId id = log.appendToGet("s", new JsonObject().put("placeholder", true)).await();
    return id.seq();
  }

  /** What was sent once {@code count} events were, or what was sent after 5 s. */
  private List<Long> sentAfter(int count) {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (on(sent::size) < count && System.nanoTime() < deadline) {
      // the cursor's reads and timers run on its context between these turns
      vertx.timer(5).await();
    }
    return on(() -> List.copyOf(sent));
  }

  private void openAt(long next) {
    on(() -> {
      cursor = new GetCursor(vertx, log, "s", next, (id, message) -> sent.add(id.seq()));
      return null;
    });
  }

  @Test
  void whatTheStoreHoldsAfterTheClientsPlaceIsSentFirstThenLiveEventsInOrder() {
    long first = store();
    long second = store();
    openAt(first);
    on(() -> {
      cursor.start();
      return null;
    });
    assertEquals(List.of(first, second), sentAfter(2));
    long third = store();
    long fourth = store();
    on(() -> {
      cursor.live(fourth, message(fourth)); // published first, though stored second
      cursor.live(third, message(third));
      return null;
    });
    assertEquals(List.of(first, second, third, fourth), sentAfter(4));
    on(() -> {
      cursor.live(third, message(third)); // a repeat: sent already
      return null;
    });
    assertEquals(4, on(() -> cursor.next()) - first);
    assertEquals(List.of(first, second, third, fourth), sentAfter(4));
  }

  @Test
  void aLiveEventWhosePredecessorNeverArrivesLiveGetsItFromTheStoreFirst() {
    long first = store();
    openAt(first);
    on(() -> {
      cursor.start();
      return null;
    });
    long second = store();
    on(() -> {
      cursor.live(second, message(second)); // the first one's publication missed this stream
      return null;
    });
    assertEquals(List.of(first, second), sentAfter(2));
  }

  @Test
  void aSlotTheStoreDroppedIsSkippedOnceALaterOneIsKnownAndNothingWaitsForIt() {
    long first = store();
    long second = store();
    vertx.sharedData().<String, JsonObject>getAsyncMap(Addresses.EVENTS_MAP)
        .compose(m -> m.remove("s|" + EventId.GET_STREAM + "|" + first)).await(); // as the window drops the oldest
    openAt(first);
    on(() -> {
      cursor.start();
      return null;
    });
    long third = store();
    on(() -> {
      cursor.live(third, message(third));
      return null;
    });
    assertEquals(List.of(second, third), sentAfter(2));
  }

  @Test
  void aStreamWithNothingStoredAfterItsPlaceSendsNothingUntilAnEventComes() {
    long head = log.position("s").await();
    openAt(head);
    on(() -> {
      cursor.start();
      return null;
    });
    long first = store();
    on(() -> {
      cursor.catchUp(); // as the stream does now and then, for a publication that never came
      return null;
    });
    assertEquals(List.of(first), sentAfter(1), "sent once, and nothing before it");
  }
}
