package dev.tidemark.gateway.impl.stream;

import dev.tidemark.gateway.impl.call.ResponseChannel;
import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.http.Authenticated;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.session.EventId;
import dev.tidemark.gateway.impl.session.EventLog;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * A 2025-11-25 session's GET stream: the server's messages outside any call. A client that comes
 * back with {@code Last-Event-ID}, to any gateway, first gets what it missed; a resumed POST stream
 * gets the rest of that call and ends as it would have. A new GET stream of a session takes over
 * from the older one, on whatever node that is, so each session has one live stream.
 */
public final class GetStream {

  /** When a new stream reads the store again, after its first read, for what was published past it. */
  static final List<Long> CATCH_UP_AFTER_OPEN_MILLIS = List.of(250L, 1000L, 3000L);

  private final Vertx vertx;
  private final EventLog events;
  private final Subscriptions subscriptions;
  private final InFlight inFlight;

  public GetStream(Vertx vertx, EventLog events, Subscriptions subscriptions, InFlight inFlight) {
    this.vertx = vertx;
    this.events = events;
    this.subscriptions = subscriptions;
    this.inFlight = inFlight;
  }

  /**
   * Completes once the stream has started; fails with a {@link Refusal} when the replay store
   * cannot be read. {@code endSession} is how a revoked caller's session ends, as a DELETE would.
   * A {@code Last-Event-ID} of a POST stream resumes that stream; one of the GET stream, or none, or
   * one this server never issues, opens the GET stream.
   */
  public Future<Void> open(HttpServerResponse response, Authenticated who, String sessionId, String lastEventId, String userAgent,
      Runnable endSession) {
    EventId last = EventId.parse(lastEventId);
    if (last != null && !last.onGetStream()) {
      return replay(sessionId, last).map(missed -> {
        resumePost(response, start(response, sessionId), missed);
        return null;
      });
    }
    return live(response, who, sessionId, last, ResponseChannel.openingOf(userAgent), endSession);
  }

  /** What the session's log holds after {@code last}; a {@link Refusal} when the replay store cannot be read. */
  private Future<List<EventLog.Event>> replay(String sessionId, EventId last) {
    Future<List<EventLog.Event>> replay = last == null ? Future.succeededFuture(List.of()) : events.after(sessionId, last);
    return replay.recover(err -> Refusal.http(503, "Session storage is unavailable; retry shortly.").future());
  }

  private ResponseChannel start(HttpServerResponse response, String sessionId) {
    ResponseChannel channel = ResponseChannel.getStream(response, events, sessionId);
    response.setStatusCode(200).setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, "text/event-stream")
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache, no-transform")
        .putHeader("X-Accel-Buffering", "no");
    return channel;
  }

  /** A POST stream resumed: what it missed, then it ends as the POST stream would have. */
  private static void resumePost(HttpServerResponse response, ResponseChannel channel, List<EventLog.Event> missed) {
    Future<Void> written = Future.succeededFuture();
    for (EventLog.Event e : missed) {
      written = written.compose(v -> channel.forward(e.id(), e.message()));
    }
    written.onComplete(ar -> response.end());
  }

  /**
   * The GET stream. Its live consumer is registered before the store is read, so that an event
   * stored after the read is published to a consumer that already listens; the cursor sends what
   * the store holds after the client's place and every live event after it, in seq order, each once.
   */
  private Future<Void> live(HttpServerResponse response, Authenticated who, String sessionId, EventId last, String opening,
      Runnable endSession) {
    String streamId = UUID.randomUUID().toString();
    // live events that arrive before the cursor knows where the client is wait for it
    List<JsonObject> early = new ArrayList<>();
    GetCursor[] cursor = {null};
    // a newer stream's takeover that arrives before this one is held ends it as soon as it is
    boolean[] takenOver = {false};
    String address = Addresses.session(sessionId);
    vertx.eventBus().publish(address, new JsonObject().put("takeover", streamId));
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(address, msg -> {
      JsonObject body = msg.body();
      if (body.containsKey("takeover")) {
        if (!streamId.equals(body.getString("takeover"))) {
          takenOver[0] = true;
          inFlight.stopStream(streamId); // the client opened a newer stream, on this node or another
        }
      } else if (cursor[0] == null) {
        early.add(body);
      } else {
        forwardLive(cursor[0], body);
      }
    });
    return consumer.completion()
        .compose(v -> events.position(sessionId))
        .recover(err -> Refusal.http(503, "Session storage is unavailable; retry shortly.").future())
        .map(head -> {
          ResponseChannel channel = start(response, sessionId);
          // without Last-Event-ID the stream starts with what is stored from now on; an id the window left behind starts at its oldest
          long next = last == null ? head : Math.max(last.seq() + 1, head - EventLog.MAX_EVENTS);
          cursor[0] = new GetCursor(vertx, events, sessionId, next, channel::forward);
          early.forEach(body -> forwardLive(cursor[0], body));
          early.clear();
          serve(response, channel, cursor[0], opening, who, sessionId, streamId, consumer, endSession, takenOver)
              .onSuccess(v -> cursor[0].start())
              .onFailure(err -> cursor[0].close());
          return (Void) null;
        })
        .onFailure(err -> consumer.unregister());
  }

  /** Holds the stream until it closes, is taken over or revoked; completes once the stream's first bytes are out. */
  private Future<Void> serve(HttpServerResponse response, ResponseChannel channel, GetCursor cursor, String opening, Authenticated who,
      String sessionId,
      String streamId, MessageConsumer<JsonObject> consumer, Runnable endSession, boolean[] takenOver) {
    // a quiet stream reads the store now and then for an event whose publication never reached it
    long keepAlive = vertx.setPeriodic(ResponseChannel.KEEP_ALIVE_MILLIS, t -> {
      channel.keepAlive();
      cursor.catchUp();
    });
    // more often at first: a writer's node may not know of this stream's consumer yet, and publish past it
    List<Long> early = CATCH_UP_AFTER_OPEN_MILLIS.stream().map(ms -> vertx.setTimer(ms, t -> cursor.catchUp())).toList();
    Runnable cleanup = () -> {
      vertx.cancelTimer(keepAlive);
      early.forEach(vertx::cancelTimer);
      cursor.close();
      inFlight.releaseStream(streamId);
      consumer.unregister();
    };
    channel.onClose(cleanup);
    Runnable close = () -> {
      cleanup.run();
      if (!channel.closed()) {
        response.end();
      }
    };
    // a revoked caller's stream ends as at node stop, and its session with it
    inFlight.holdStream(streamId, new InFlight.Held(who.caller(), close, () -> {
      close.run();
      endSession.run();
    }, () -> channel.retryHint().onComplete(ar -> close.run())), who.atNanos());
    if (takenOver[0]) {
      close.run(); // a newer stream took over while this one read the store
    }
    if (channel.closed()) {
      cleanup.run();
      return Future.failedFuture("closed"); // revoked while its credentials were being checked, or taken over
    }
    // a GET stream has no filter: it hears both lists change
    return subscriptions.add(who.database(), Subscriptions.LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.LIST_CHANGED))
        .compose(v -> subscriptions.add(who.database(), Subscriptions.TOOLS_LIST_CHANGED,
            Subscriptions.sessionTarget(sessionId, Subscriptions.TOOLS_LIST_CHANGED)))
        .compose(v -> response.write(opening)); // how long to wait before reconnecting, should it break
  }

  /** A live event of the GET stream, {@code {"seq", "message"}} as {@code Subscriptions} publishes it. */
  private static void forwardLive(GetCursor cursor, JsonObject body) {
    Long seq = body.getLong("seq");
    // a gateway of the previous release publishes {"id"} under its own numbering: not an id of this stream
    if (seq != null) {
      cursor.live(seq, body.getJsonObject("message"));
    }
  }
}
