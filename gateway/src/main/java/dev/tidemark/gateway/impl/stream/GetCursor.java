package dev.tidemark.gateway.impl.stream;

import dev.tidemark.gateway.impl.session.EventId;
import dev.tidemark.gateway.impl.session.EventLog;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * Where a GET stream's client is in the session's event log, and what it gets next: every stored
 * event after that place, in seq order, each once. Writers on any node store an event and then
 * publish it, so live events arrive in any order (two notifications of one change are written side
 * by side, and two gateways may notify one session at once), and a publication can miss a stream
 * whose registration has not reached the writer's node yet. So the live events only say what the
 * store holds: one that is next is sent at once, a later one waits while the gap before it is read
 * from the store, and the store is read again now and then for what never arrived live. Since a
 * seq is stored only after every seq below it ({@link EventLog#appendToGet}), a gap the store no
 * longer holds was dropped (the stream's window moved past it), and is skipped. Runs on the
 * stream's context; not thread-safe.
 */
final class GetCursor {

  /** How long a gap may wait for its live events before the store is read: most arrive within it. */
  static final long GAP_WAIT_MILLIS = 25;
  static final int READ_BATCH = 16;
  /** How soon a read of the store that failed is tried again. */
  static final long RETRY_MILLIS = 1000;

  private final Vertx vertx;
  private final EventLog events;
  private final String sessionId;
  private final BiConsumer<EventId, JsonObject> send;
  /** Live events above {@link #next}, by seq. */
  private final TreeMap<Long, JsonObject> early = new TreeMap<>();
  /** The seq the client gets next. */
  private long next;
  private boolean started;
  private boolean reading;
  /** A read was asked for while one was under way. */
  private boolean again;
  private long gapTimer = -1;
  private boolean closed;

  /**
   * @param next the first seq the client should get
   * @param send writes one event to the client, in the order called
   */
  GetCursor(Vertx vertx, EventLog events, String sessionId, long next, BiConsumer<EventId, JsonObject> send) {
    this.vertx = vertx;
    this.events = events;
    this.sessionId = sessionId;
    this.next = next;
    this.send = send;
  }

  long next() {
    return next;
  }

  /** A live event, {@code {"seq", "message"}} as it was published; one already sent is dropped. */
  void live(long seq, JsonObject message) {
    if (closed || seq < next) {
      return; // sent already, from the store or live
    }
    early.put(seq, message);
    if (started) {
      drain();
      awaitGap();
    }
  }

  /** The stream's first bytes are out: events may go now, starting with what the store holds. */
  void start() {
    started = true;
    catchUp();
  }

  void close() {
    closed = true;
    early.clear();
    if (gapTimer != -1) {
      vertx.cancelTimer(gapTimer);
    }
  }

  /**
   * Reads the store from {@link #next} on and sends what it holds: all of the gap before the first
   * live event waiting, or, with none waiting, whatever was stored and never arrived live (one read
   * of one slot when nothing was, the usual case).
   */
  void catchUp() {
    catchUp(1);
  }

  private void catchUp(int unknownCount) {
    if (reading) {
      again = true; // the read under way may have begun before what this one is for was stored
      return;
    }
    if (!started || closed) {
      return;
    }
    reading = true;
    again = false;
    long from = next;
    // every seq below one stored before this read began was stored too: a slot of them found empty was dropped
    long known = early.isEmpty() ? Long.MIN_VALUE : early.lastKey();
    int count = known > from ? (int) Math.min(READ_BATCH, known - from) : unknownCount;
    events.read(sessionId, from, count).onComplete(ar -> {
      reading = false;
      if (closed) {
        return;
      }
      if (ar.failed()) {
        // the store cannot be read now: try again a little later, not at the pace of a gap
        gapTimer = gapTimer != -1 ? gapTimer : vertx.setTimer(RETRY_MILLIS, t -> {
          gapTimer = -1;
          catchUp();
        });
        return;
      }
      boolean whole = took(ar.result(), known);
      boolean progressed = next > from;
      drain();
      boolean gapLeft = !early.isEmpty() && early.firstKey() > next;
      if (again || progressed && (gapLeft || whole && known == Long.MIN_VALUE)) {
        catchUp(READ_BATCH); // more of the gap, or more stored after what this read found
      } else {
        awaitGap();
      }
    });
  }

  /** Sends the slots read that come next; true when every one of them was stored or dropped (the read did not reach the end). */
  private boolean took(List<EventLog.Slot> slots, long known) {
    for (EventLog.Slot slot : slots) {
      if (slot.seq() < next) {
        continue; // arrived live while the store was read
      }
      if (slot.seq() > next) {
        return false;
      }
      if (slot.stored()) {
        if (slot.message() != null) {
          send.accept(new EventId(EventId.GET_STREAM, slot.seq()), slot.message());
        }
        next++;
      } else if (slot.seq() < known) {
        next++; // dropped from the store: nothing left to send
      } else {
        return false; // not stored yet: what follows comes live, or at the next read
      }
    }
    return true;
  }

  private void drain() {
    early.headMap(next).clear();
    while (!early.isEmpty() && early.firstKey() == next) {
      send.accept(new EventId(EventId.GET_STREAM, next), early.pollFirstEntry().getValue());
      next++;
    }
  }

  /** With a live event waiting behind a gap, reads the store for it unless its own live events come first. */
  private void awaitGap() {
    if (closed || reading || gapTimer != -1 || early.isEmpty()) {
      return;
    }
    gapTimer = vertx.setTimer(GAP_WAIT_MILLIS, t -> {
      gapTimer = -1;
      if (!early.isEmpty()) {
        catchUp();
      }
    });
  }
}
