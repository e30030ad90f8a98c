package dev.tidemark.gateway.impl.session;

import dev.tidemark.contract.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;

/**
 * The SSE events of each legacy session, in cluster-wide storage, so that a client reconnecting
 * with Last-Event-ID, to any gateway, gets what it missed on that stream and nothing of the others.
 *
 * <p>Each event is one map entry, {@code <session>|<stream>|<seq>}, written once; no entry is shared
 * by two streams, so parallel calls of one session never wait for each other. A POST stream has one
 * writer, the gateway that serves the POST: it numbers its events itself ({@link PostStream}) and
 * removes those that leave its window. A session's GET stream has writers on every node (any node
 * may announce a change): each takes the next free seq by writing its entry if absent, starting from
 * a small entry of its own, {@code <session>|g}, that holds where the next write should start.
 */
public final class EventLog {

  /** A stream keeps at most this many events for replay... */
  public static final int MAX_EVENTS = 256;
  /** ...and a POST stream at most this many bytes of them; the oldest go first. */
  public static final int MAX_BYTES = 1024 * 1024;
  /** A larger message is delivered but not kept for replay (its id is kept, without the message). */
  public static final int MAX_STORED_MESSAGE_BYTES = 64 * 1024;
  /** How long a POST stream's events stay after they were written: a client reconnects within seconds. */
  public static final long POST_EVENT_MILLIS = 5 * 60 * 1000L;
  /** Replay reads this many entries at once. */
  static final int READ_BATCH = 16;

  private static final int MAX_CLAIMS = 50;
  /** A writer steps past seqs taken by writers that went before it; each step is another writer's success. */
  private static final int MAX_PLACE_ATTEMPTS = 1024;

  private final Vertx vertx;

  public EventLog(Vertx vertx) {
    this.vertx = vertx;
  }

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.EVENTS_MAP);
  }

  static String key(String sessionId, String stream, long seq) {
    return sessionId + "|" + stream + "|" + seq;
  }

  private static String getHead(String sessionId) {
    return sessionId + "|" + EventId.GET_STREAM;
  }

  /** The size a message is kept at: its encoded length, 0 for a retry event or one too large to keep. */
  private static int keptSize(JsonObject message) {
    int size = message == null ? 0 : message.encode().length();
    return size <= MAX_STORED_MESSAGE_BYTES ? size : 0;
  }

  /** The entry of an event: the message, or nothing when it is a retry event or too large. */
  private static JsonObject entry(JsonObject message, int keptSize) {
    return keptSize == 0 ? new JsonObject() : new JsonObject().put("message", message);
  }

  /** A new POST stream of the session, numbered by its one writer. */
  public PostStream postStream(String sessionId) {
    return new PostStream(sessionId, EventId.newPostStream());
  }

  /**
   * The events of one POST stream. Not thread-safe: its channel appends in order, one at a time.
   * Every event after the priming one has an entry, empty when its message is not kept, so that the
   * stored seqs have no gaps and a replay can read on until the first missing one.
   */
  public final class PostStream {

    private final String sessionId;
    private final String stream;
    private final ReplayWindow window = new ReplayWindow(MAX_EVENTS, MAX_BYTES);
    private long last;

    private PostStream(String sessionId, String stream) {
      this.sessionId = sessionId;
      this.stream = stream;
    }

    /** The id of the stream's priming event, seq 0, under which nothing is stored. */
    public EventId priming() {
      return new EventId(stream, 0);
    }

    /** Stores {@code message} (null for a retry event) as the stream's next event; completes with its id once it is stored. */
    public Future<EventId> append(JsonObject message) {
      long seq = ++last;
      int size = keptSize(message);
      JsonObject entry = entry(message, size);
      List<Long> evicted = window.keep(seq, size);
      return map().compose(m -> {
        for (long old : evicted) {
          m.remove(key(sessionId, stream, old));
        }
        return m.put(key(sessionId, stream, seq), entry, POST_EVENT_MILLIS);
      }).map(new EventId(stream, seq));
    }
  }

  /**
   * Stores {@code message} (null for a retry event) as the next event of the session's GET stream;
   * completes with its id. A seq is taken by writing its entry ({@code putIfAbsent}), starting at the
   * head's hint and going up past seqs other writers took first, so that the stored seqs of a GET
   * stream have no gaps: a seq exists only once its entry does, and every seq below a stored one was
   * stored before it. That is what lets the stream that delivers them fill a gap from this store
   * ({@link #read}) and know that an entry it cannot find there was dropped, never still to come.
   */
  public Future<EventId> appendToGet(String sessionId, JsonObject message) {
    JsonObject entry = entry(message, keptSize(message));
    return map().compose(m -> position(m, sessionId).compose(from -> place(m, sessionId, from, from, entry, 0)))
        .map(seq -> new EventId(EventId.GET_STREAM, seq));
  }

  /**
   * The seq the session's GET stream writes next, as its head says; the head is made when the
   * session has none. The first seq of a GET stream is the clock in microseconds, so a stream whose
   * head expired with an idle session starts again above every id it issued before. The head is a
   * hint that follows the writes: seqs at or above it may already be stored.
   */
  public Future<Long> position(String sessionId) {
    return map().compose(m -> position(m, sessionId));
  }

  private Future<Long> position(AsyncMap<String, JsonObject> m, String sessionId) {
    String head = getHead(sessionId);
    return m.get(head).compose(current -> {
      if (current != null) {
        return Future.succeededFuture(current.getLong("next"));
      }
      long first = System.currentTimeMillis() * 1000;
      return m.putIfAbsent(head, head(first), SessionStore.IDLE_MILLIS)
          .map(previous -> previous == null ? first : previous.getLong("next"));
    });
  }

  /** Stores {@code entry} at {@code seq} or the first free seq after it; {@code hint} is the head's seq this writer read. */
  private Future<Long> place(AsyncMap<String, JsonObject> m, String sessionId, long hint, long seq, JsonObject entry, int attempt) {
    if (attempt >= MAX_PLACE_ATTEMPTS) {
      return Future.failedFuture(new IllegalStateException("the GET stream of a session stayed contended"));
    }
    return m.putIfAbsent(key(sessionId, EventId.GET_STREAM, seq), entry, SessionStore.IDLE_MILLIS).compose(previous -> {
      if (previous != null) {
        return place(m, sessionId, hint, seq + 1, entry, attempt + 1); // another writer stored this seq first
      }
      m.remove(key(sessionId, EventId.GET_STREAM, seq - MAX_EVENTS));
      // usually the head still says what this writer read: one compare-and-set moves it on
      return m.replaceIfPresent(getHead(sessionId), head(hint), head(seq + 1))
          .compose(moved -> moved ? Future.succeededFuture() : advance(m, sessionId, seq + 1, 0))
          .map(seq);
    });
  }

  private static JsonObject head(long next) {
    return new JsonObject().put("next", next);
  }

  /**
   * Moves the head's hint to at least {@code next}. Only a hint: a writer that finds its seq taken
   * goes on to the next one, so a head left behind costs later writers a step each, never a gap.
   */
  private Future<Void> advance(AsyncMap<String, JsonObject> m, String sessionId, long next, int attempt) {
    String head = getHead(sessionId);
    return m.get(head).compose(current -> {
      if (current != null && current.getLong("next") >= next || attempt >= MAX_CLAIMS) {
        return Future.succeededFuture();
      }
      Future<Boolean> done = current == null
          ? m.putIfAbsent(head, head(next), SessionStore.IDLE_MILLIS).map(previous -> previous == null)
          : m.replaceIfPresent(head, current, head(next));
      return done.compose(ok -> ok ? Future.succeededFuture() : advance(m, sessionId, next, attempt + 1));
    });
  }

  /** One place of the GET stream as the store holds it: whether an entry is there, and its message if one was kept. */
  public record Slot(long seq, boolean stored, JsonObject message) {}

  /** The slots {@code from} to {@code from + count - 1} of the session's GET stream, in order, read side by side. */
  public Future<List<Slot>> read(String sessionId, long from, int count) {
    return map().compose(m -> {
      List<Future<JsonObject>> reads = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        reads.add(m.get(key(sessionId, EventId.GET_STREAM, from + i)));
      }
      return Future.all(reads).map(done -> {
        List<Slot> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
          JsonObject entry = reads.get(i).result();
          out.add(new Slot(from + i, entry != null, entry == null ? null : entry.getJsonObject("message")));
        }
        return out;
      });
    });
  }

  /** One kept event: its id and message. */
  public record Event(EventId id, JsonObject message) {}

  /**
   * The kept events of {@code last}'s stream after it, in order; events kept without a message (a
   * retry event, one too large) are skipped. Reads {@link #READ_BATCH} entries at a time until a
   * batch ends on a missing one, and never more than a stream keeps.
   */
  public Future<List<Event>> after(String sessionId, EventId last) {
    List<Event> out = new ArrayList<>();
    return map().compose(m -> read(m, sessionId, last.stream(), last.seq() + 1, out, 0)).map(out);
  }

  private Future<Void> read(AsyncMap<String, JsonObject> m, String sessionId, String stream, long from, List<Event> out, int round) {
    List<Future<JsonObject>> reads = new ArrayList<>(READ_BATCH);
    for (int i = 0; i < READ_BATCH; i++) {
      reads.add(m.get(key(sessionId, stream, from + i)));
    }
    return Future.all(reads).compose(done -> {
      for (int i = 0; i < READ_BATCH; i++) {
        JsonObject entry = reads.get(i).result();
        if (entry != null && entry.containsKey("message")) {
          out.add(new Event(new EventId(stream, from + i), entry.getJsonObject("message")));
        }
      }
      boolean more = reads.get(READ_BATCH - 1).result() != null && (round + 1) * READ_BATCH < MAX_EVENTS;
      return more ? read(m, sessionId, stream, from + READ_BATCH, out, round + 1) : Future.succeededFuture();
    });
  }

  /** Forgets the GET stream's counter of an ended session; its events expire on their own and no request can read them. */
  public Future<Void> forget(String sessionId) {
    return map().compose(m -> m.remove(getHead(sessionId))).mapEmpty();
  }
}
