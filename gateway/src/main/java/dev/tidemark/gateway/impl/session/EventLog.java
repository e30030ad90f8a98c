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
 * may announce a change), so its next seq is a small entry of its own, {@code <session>|g}, taken with
 * a compare-and-set that only those writers contend for.
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
   * completes with its id. The first seq of a GET stream is the clock in microseconds, so a stream
   * whose counter expired with an idle session starts again above every id it issued before.
   */
  public Future<EventId> appendToGet(String sessionId, JsonObject message) {
    return map().compose(m -> claim(m, sessionId, 0).compose(seq -> {
      m.remove(key(sessionId, EventId.GET_STREAM, seq - MAX_EVENTS));
      return m.put(key(sessionId, EventId.GET_STREAM, seq), entry(message, keptSize(message)), SessionStore.IDLE_MILLIS)
          .map(new EventId(EventId.GET_STREAM, seq));
    }));
  }

  private Future<Long> claim(AsyncMap<String, JsonObject> m, String sessionId, int attempt) {
    if (attempt >= MAX_CLAIMS) {
      return Future.failedFuture(new IllegalStateException("the GET stream of a session stayed contended"));
    }
    String head = getHead(sessionId);
    return m.get(head).compose(current -> {
      long seq = current == null ? System.currentTimeMillis() * 1000 : current.getLong("next");
      JsonObject next = new JsonObject().put("next", seq + 1);
      Future<Boolean> taken = current == null
          ? m.putIfAbsent(head, next, SessionStore.IDLE_MILLIS).map(previous -> previous == null)
          : m.replaceIfPresent(head, current, next);
      return taken.compose(ok -> ok ? Future.succeededFuture(seq) : claim(m, sessionId, attempt + 1));
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
