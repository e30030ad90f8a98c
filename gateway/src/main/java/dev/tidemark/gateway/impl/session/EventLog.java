package dev.tidemark.gateway.impl.session;

import dev.tidemark.contract.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;

/**
 * The SSE events of each legacy session, in cluster-wide storage: ids that are unique per session
 * and increase, and a bounded replay store so that a client reconnecting with Last-Event-ID, to any
 * gateway, gets what it missed. A session's events live in one map entry, appended with
 * compare-and-set so that producers on several nodes never lose each other's events.
 */
public final class EventLog {

  /** The replay store keeps at most this many events per session... */
  public static final int MAX_EVENTS = 256;
  /** ...and at most this many bytes of them; the oldest go first. */
  public static final int MAX_BYTES = 1024 * 1024;
  /** A larger message is delivered but not kept for replay (its id is kept, without the message). */
  public static final int MAX_STORED_MESSAGE_BYTES = 64 * 1024;
  /** The stream name of a session's GET stream; POST streams are named {@code post:<request id>}. */
  public static final String GET_STREAM = "get";

  private static final int MAX_ATTEMPTS = 50;

  private final Vertx vertx;

  public EventLog(Vertx vertx) {
    this.vertx = vertx;
  }

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.EVENTS_MAP);
  }

  /** Stores {@code message} (null for a priming event) as the session's next event on {@code stream}; completes with its id. */
  public Future<Long> append(String sessionId, String stream, JsonObject message) {
    return map().compose(m -> append(m, sessionId, stream, message, 0));
  }

  private Future<Long> append(AsyncMap<String, JsonObject> m, String sessionId, String stream, JsonObject message, int attempt) {
    if (attempt >= MAX_ATTEMPTS) {
      return Future.failedFuture(new IllegalStateException("event log of a session stayed contended"));
    }
    return m.get(sessionId).compose(current -> {
      long id = current == null ? 1 : current.getLong("next");
      JsonObject next = appended(current, id, stream, message);
      Future<Boolean> written = current == null
          ? m.putIfAbsent(sessionId, next, SessionStore.IDLE_MILLIS).map(previous -> previous == null)
          : m.replaceIfPresent(sessionId, current, next);
      return written.compose(ok -> ok ? Future.succeededFuture(id) : append(m, sessionId, stream, message, attempt + 1));
    });
  }

  private static JsonObject appended(JsonObject current, long id, String stream, JsonObject message) {
    JsonArray events = current == null ? new JsonArray() : current.getJsonArray("events").copy();
    JsonObject event = new JsonObject().put("id", id).put("stream", stream);
    // a priming event (null) carries no message: its id is kept so that a client can resume from it,
    // but it is never replayed
    if (message != null && message.encode().length() <= MAX_STORED_MESSAGE_BYTES) {
      event.put("message", message);
    }
    events.add(event);
    int bytes = events.encode().length();
    while (events.size() > MAX_EVENTS || (bytes > MAX_BYTES && events.size() > 1)) {
      bytes -= events.getJsonObject(0).encode().length();
      events.remove(0);
    }
    return new JsonObject().put("next", id + 1).put("events", events);
  }

  /**
   * What a client that last saw event {@code lastId} missed: the later events of the stream that
   * event belonged to. {@code stream} is null when the event is unknown (never issued, or evicted).
   */
  public record Replay(String stream, List<JsonObject> events) {}

  public Future<Replay> after(String sessionId, long lastId) {
    return map().compose(m -> m.get(sessionId)).map(current -> {
      if (current == null) {
        return new Replay(null, List.of());
      }
      String stream = null;
      List<JsonObject> events = new ArrayList<>();
      for (Object o : current.getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        long id = e.getLong("id");
        if (id == lastId) {
          stream = e.getString("stream");
        } else if (id > lastId && stream != null && stream.equals(e.getString("stream")) && e.containsKey("message")) {
          events.add(e);
        }
      }
      return new Replay(stream, events);
    });
  }

  public Future<Void> forget(String sessionId) {
    return map().compose(m -> m.remove(sessionId)).mapEmpty();
  }
}
