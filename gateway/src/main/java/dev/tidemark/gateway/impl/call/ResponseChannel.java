package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.call.ResponseChannel;
import dev.tidemark.gateway.impl.session.EventId;
import dev.tidemark.gateway.impl.session.EventLog;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.util.function.Supplier;

/**
 * Where the messages of one request go: a single JSON response, or an SSE stream that carries
 * notifications and server requests before the final response. On a legacy session every SSE event
 * gets an id on its own stream and is kept for replay in the {@link EventLog} before it is written:
 * a POST stream numbers its events itself, the session's GET stream takes the next seq of its own
 * counter. Writes stay in order.
 */
public final class ResponseChannel {

  /** Quiet SSE streams get a comment this often, so that intermediaries keep them open. */
  public static final long KEEP_ALIVE_MILLIS = 15_000;
  /**
   * How long a client waits before it reconnects a stream that broke, as the streams that outlive
   * a call (the GET stream, a listen stream) and every retry hint tell it in their {@code retry:} field.
   */
  public static final long RETRY_MILLIS = 1000;
  /** The first bytes of a stream that tells its client how long to wait before reconnecting. */
  static final String RETRY_FIELD = "retry: " + RETRY_MILLIS + "\n\n";
  /**
   * The User-Agent of the JDK's HTTP client, which the MCP Java SDK's transport sends as it is. Its
   * SSE parser (1.1.5 and 2.0.1 alike: modelcontextprotocol/java-sdk#1047) fails the whole stream
   * on a {@code retry:} line, so a stream that outlives a call opens without one for that client.
   */
  private static final String JDK_HTTP_CLIENT = "Java-http-client/";

  /** The first bytes of a stream that outlives a call: the reconnection delay, for a client whose parser takes it. */
  public static String openingOf(String userAgent) {
    return userAgent != null && userAgent.startsWith(JDK_HTTP_CLIENT) ? ":\n\n" : RETRY_FIELD;
  }

  private final HttpServerResponse response;
  private final boolean sse;
  /** The session's GET stream when this is one; null on a POST stream or the 2026-07-28 era. */
  private final EventLog log;
  /** The POST stream's events when this is one on a session. */
  private final EventLog.PostStream post;
  private final String sessionId;
  private Future<Void> tail = Future.succeededFuture();
  private boolean finished;
  /** Whether {@link #open} started the stream; a response that comes before it is sent as plain JSON. */
  private boolean opened;

  private ResponseChannel(HttpServerResponse response, boolean sse, EventLog log, EventLog.PostStream post, String sessionId) {
    this.response = response;
    this.sse = sse;
    this.log = log;
    this.post = post;
    this.sessionId = sessionId;
  }

  public static ResponseChannel json(HttpServerResponse response) {
    return new ResponseChannel(response, false, null, null, null);
  }

  /** A POST's stream; {@code log} and {@code sessionId} are null on the 2026-07-28 era, whose streams carry no event ids. */
  public static ResponseChannel sse(HttpServerResponse response, EventLog log, String sessionId) {
    return new ResponseChannel(response, true, null, log == null || sessionId == null ? null : log.postStream(sessionId), sessionId);
  }

  /**
   * A session's GET stream, whose events share one sequence across connections and nodes. Its
   * caller starts the stream itself (no priming event), so it counts as opened: keep-alive
   * comments go out from the start.
   */
  public static ResponseChannel getStream(HttpServerResponse response, EventLog log, String sessionId) {
    ResponseChannel channel = new ResponseChannel(response, true, log, null, sessionId);
    channel.opened = true;
    return channel;
  }

  public boolean streaming() {
    return sse;
  }

  public boolean closed() {
    return response.closed() || response.ended();
  }

  public void onClose(Runnable action) {
    response.closeHandler(v -> action.run());
  }

  /** Starts the stream: headers, then a priming event that gives the client an id to resume from. */
  public Future<Void> open() {
    return open(":\n\n");
  }

  /**
   * {@link #open()} for a stream that stays open (a 2026-07-28 listen stream): {@code opening},
   * which tells the client how long to wait before reconnecting, should it break ({@link #openingOf}).
   */
  public Future<Void> openStaying(String opening) {
    return open(opening);
  }

  private Future<Void> open(String firstBytes) {
    if (!sse) {
      return Future.succeededFuture();
    }
    opened = true;
    response.setStatusCode(200)
        .setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, "text/event-stream")
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache, no-transform")
        .putHeader("X-Accel-Buffering", "no");
    if (sessionId != null) {
      response.putHeader(McpHeaders.SESSION, sessionId);
    }
    if (post == null) {
      return response.write(firstBytes);
    }
    // nothing is stored under a priming event: a client that resumes from it reads from seq 1
    return chain(() -> write(post.priming(), null));
  }

  /** A notification or server request, before the final response. Dropped on a JSON channel. */
  public Future<Void> send(JsonObject message) {
    if (!sse || !opened || finished) {
      return Future.succeededFuture();
    }
    return enqueue(message);
  }

  /** The final response; it ends the response. */
  public Future<Void> finish(int status, JsonObject message) {
    if (finished) {
      return Future.succeededFuture();
    }
    finished = true;
    if (!sse || !opened) {
      // a refusal before the stream started (a listen request with bad params) is one JSON response
      if (closed()) {
        return Future.succeededFuture();
      }
      // encoded straight to UTF-8 bytes: a String would be encoded a second time on its way out
      return response.setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(message.toBuffer());
    }
    return enqueue(message).compose(v -> closed() ? Future.succeededFuture() : response.end());
  }

  /**
   * Ends the request because its caller's token was revoked: a 401 like any refused credential when
   * nothing was sent yet, otherwise {@code error} as the stream's last event.
   */
  public Future<Void> revoked(JsonObject error) {
    if (!finished && (!sse || !opened)) {
      response.putHeader("WWW-Authenticate", McpHeaders.INVALID_TOKEN_CHALLENGE)
          .putHeader(HttpHeaders.CONNECTION, "close");
    }
    return finish(401, error);
  }

  /** Ends the stream without a response, as after a cancellation. */
  public Future<Void> abandon() {
    finished = true;
    return tail.compose(v -> closed() ? Future.succeededFuture() : sse && opened ? response.end() : response.setStatusCode(204).end());
  }

  /**
   * Before a stopping node ends the stream: an event with {@code retry:} (and, on a session, an id
   * to resume from), as the protocol asks of a server that closes a stream, so that the client
   * reconnects, to another gateway, with {@code Last-Event-ID}. An event without data is not
   * delivered to the client's application.
   */
  public Future<Void> retryHint() {
    if (!sse || finished || closed()) {
      return Future.succeededFuture();
    }
    return enqueue(null);
  }

  /** Writes a comment that keeps idle intermediaries from closing a quiet stream. */
  public void keepAlive() {
    if (sse && opened && !closed()) {
      chain(() -> closed() ? Future.succeededFuture() : response.write(":\n\n"));
    }
  }

  private Future<Void> enqueue(JsonObject message) {
    return chain(() -> {
      Future<EventId> id = post != null ? post.append(message)
          : log != null ? log.appendToGet(sessionId, message)
          : Future.succeededFuture(null);
      return id.compose(eventId -> write(eventId, message));
    });
  }

  private Future<Void> chain(Supplier<Future<Void>> step) {
    Future<Void> next = tail.compose(v -> step.get());
    tail = next.recover(err -> Future.succeededFuture());
    return next;
  }

  private Future<Void> write(EventId id, JsonObject message) {
    if (closed()) {
      return Future.succeededFuture();
    }
    StringBuilder event = new StringBuilder();
    if (id != null) {
      event.append("id: ").append(id).append('\n');
    }
    if (message == null) {
      event.append("retry: ").append(RETRY_MILLIS).append("\ndata: \n\n");
    } else {
      event.append("event: message\ndata: ").append(message.encode()).append("\n\n");
    }
    return response.write(event.toString());
  }

  /** Writes an event that already has an id (a replayed or live GET-stream event). */
  public Future<Void> forward(EventId id, JsonObject message) {
    return chain(() -> write(id, message));
  }
}
