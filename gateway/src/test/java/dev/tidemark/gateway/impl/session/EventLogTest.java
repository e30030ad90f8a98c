package dev.tidemark.gateway.impl.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The replay store on a single Vert.x instance's shared data, which has the cluster map's operations. */
class EventLogTest {

  private final Vertx vertx = Vertx.vertx();
  private final EventLog log = new EventLog(vertx);

  @AfterEach
  void close() {
    vertx.close().await();
  }

  private static JsonObject message(String text) {
    return new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/message").put("params", new JsonObject().put("data", text));
  }

  private static List<String> texts(List<EventLog.Event> events) {
    return events.stream().map(e -> e.message().getJsonObject("params").getString("data")).toList();
  }

  @Test
  void aResumedStreamGetsItsOwnLaterEventsAndNothingOfTheOthers() {
    EventLog.PostStream a = log.postStream("s");
    EventLog.PostStream b = log.postStream("s");
    EventId a1 = a.append(message("a1")).await();
    b.append(message("b1")).await();
    log.appendToGet("s", message("g1")).await();
    a.append(message("a2")).await();
    b.append(message("b2")).await();
    EventId a3 = a.append(message("a3")).await();
    assertEquals(List.of("a2", "a3"), texts(log.after("s", a1).await()));
    assertEquals(a3, log.after("s", a1).await().get(1).id());
    assertEquals(List.of(), log.after("s", a3).await());
    assertEquals(List.of("b1", "b2"), texts(log.after("s", b.priming()).await()), "from the priming event: all of it");
    assertEquals(List.of(), log.after("other-session", a1).await());
  }

  @Test
  void eventsWithoutAMessageKeepTheirPlaceButAreNeverReplayed() {
    EventLog.PostStream a = log.postStream("s");
    a.append(message("first")).await();
    a.append(null).await(); // a retry event
    a.append(message("x".repeat(EventLog.MAX_STORED_MESSAGE_BYTES))).await(); // too large to keep
    a.append(message("last")).await();
    assertEquals(List.of("first", "last"), texts(log.after("s", a.priming()).await()));
  }

  @Test
  void aStreamKeepsItsNewestEventsAndAnIdOlderThanThemReplaysNothing() {
    EventLog.PostStream a = log.postStream("s");
    List<EventId> ids = new ArrayList<>();
    for (int i = 0; i < EventLog.MAX_EVENTS + 40; i++) {
      ids.add(a.append(message("e" + i)).await());
    }
    List<EventLog.Event> fromWindowStart = log.after("s", ids.get(39)).await();
    assertEquals(EventLog.MAX_EVENTS, fromWindowStart.size());
    assertEquals("e40", texts(fromWindowStart).get(0));
    assertEquals(List.of(), log.after("s", ids.get(2)).await(), "what follows it was dropped");
  }

  @Test
  void writersOfOneGetStreamThatStartFromAHeadLeftBehindStepPastTheTakenSeqs() {
    long first = log.position("s").await();
    List<Future<EventId>> writes = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      writes.add(log.appendToGet("s", message("g" + i)));
    }
    Future.all(writes).await();
    List<Long> seqs = writes.stream().map(w -> w.result().seq()).sorted().toList();
    assertEquals(first, seqs.get(0), "the first write takes the head's seq");
    assertEquals(first + 29, seqs.get(29), "no gaps");
    List<EventLog.Slot> slots = log.read("s", first - 1, 32).await();
    assertEquals(false, slots.get(0).stored(), "nothing below the first seq");
    assertTrue(slots.subList(1, 31).stream().allMatch(EventLog.Slot::stored));
    assertEquals(false, slots.get(31).stored(), "nothing after the last");
    assertEquals("g0", texts(log.after("s", new EventId(EventId.GET_STREAM, first - 1)).await()).stream().sorted().findFirst().orElseThrow());
  }

  @Test
  void parallelWritersOfOneSessionAllSucceedAndTheGetStreamsSeqsHaveNoGaps() {
    List<Future<EventId>> writes = new ArrayList<>();
    List<EventLog.PostStream> posts = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      posts.add(log.postStream("s"));
    }
    for (int round = 0; round < 20; round++) {
      for (EventLog.PostStream p : posts) {
        writes.add(p.append(message("p")));
      }
      writes.add(log.appendToGet("s", message("g" + round)));
    }
    Future.all(writes).await();
    Set<String> ids = new HashSet<>();
    writes.forEach(w -> ids.add(w.result().toString()));
    assertEquals(writes.size(), ids.size(), "every event has an id of its own");
    List<Long> getSeqs = writes.stream().map(Future::result).filter(EventId::onGetStream).map(EventId::seq).sorted().toList();
    for (int i = 1; i < getSeqs.size(); i++) {
      assertEquals(getSeqs.get(i - 1) + 1, getSeqs.get(i), getSeqs.toString());
    }
    assertEquals(19, log.after("s", new EventId(EventId.GET_STREAM, getSeqs.get(0))).await().size());
    assertEquals(getSeqs.get(getSeqs.size() - 1) + 1, log.position("s").await(), "the head follows the writes");
  }
}
