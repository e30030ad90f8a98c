package dev.tidemark.gateway.impl.stream;

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
  public Future<Void> open(HttpServerResponse response, Authenticated who, String sessionId, String lastEventId, Runnable endSession) {
    EventId last = EventId.parse(lastEventId);
    if (last != null && !last.onGetStream()) {
      return replay(sessionId, last).map(missed -> {
        resumePost(response, start(response, sessionId), missed);
        return null;
      });
    }
    return live(response, who, sessionId, last, endSession);
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
   * The GET stream. Its live consumer is registered before the log is read: an event stored
   * before the read is in the replay, one stored after it is published to a consumer that already
   * listens, and one that is both is sent once, by its sequence number. Read first, an event stored
   * between the read and the registration would be lost.
   */
  private Future<Void> live(HttpServerResponse response, Authenticated who, String sessionId, EventId last, Runnable endSession) {
    String streamId = UUID.randomUUID().toString();
    long[] lastSent = {last == null ? -1 : last.seq()};
    // live events that arrive before the replay is written wait, so that ids reach the client in order
    List<JsonObject> early = new ArrayList<>();
    boolean[] replayed = {false};
    // a newer stream's takeover that arrives before this one is held ends it as soon as it is
    boolean[] takenOver = {false};
    ResponseChannel[] channel = {null};
    String address = Addresses.session(sessionId);
    vertx.eventBus().publish(address, new JsonObject().put("takeover", streamId));
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(address, msg -> {
      JsonObject body = msg.body();
      if (body.containsKey("takeover")) {
        if (!streamId.equals(body.getString("takeover"))) {
          takenOver[0] = true;
          inFlight.stopStream(streamId); // the client opened a newer stream, on this node or another
        }
      } else if (!replayed[0]) {
        early.add(body);
      } else {
        forwardLive(channel[0], body, lastSent);
      }
    });
    return consumer.completion()
        .compose(v -> replay(sessionId, last))
        .map(missed -> {
          channel[0] = start(response, sessionId);
          serve(response, channel[0], who, sessionId, streamId, consumer, endSession, takenOver).onSuccess(v -> {
            for (EventLog.Event e : missed) {
              channel[0].forward(e.id(), e.message());
              lastSent[0] = Math.max(lastSent[0], e.id().seq());
            }
            replayed[0] = true;
            early.sort(java.util.Comparator.comparingLong(body -> body.getLong("seq", -1L)));
            early.forEach(body -> forwardLive(channel[0], body, lastSent));
            early.clear();
          }).onFailure(err -> early.clear());
          return (Void) null;
        })
        .onFailure(err -> consumer.unregister());
  }

  /** Holds the stream until it closes, is taken over or revoked; completes once the stream's first bytes are out. */
  private Future<Void> serve(HttpServerResponse response, ResponseChannel channel, Authenticated who, String sessionId,
      String streamId, MessageConsumer<JsonObject> consumer, Runnable endSession, boolean[] takenOver) {
    long keepAlive = vertx.setPeriodic(ResponseChannel.KEEP_ALIVE_MILLIS, t -> channel.keepAlive());
    Runnable cleanup = () -> {
      vertx.cancelTimer(keepAlive);
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
    inFlight.holdStream(streamId, new InFlight.Held(who.caller().id(), close, () -> {
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
    return subscriptions.add(who.database(), Subscriptions.LIST_CHANGED, Subscriptions.sessionTarget(sessionId, Subscriptions.LIST_CHANGED))
        .compose(v -> response.write(":\n\n"));
  }

  /** A live event of the GET stream, {@code {"seq", "message"}} as {@code Subscriptions} publishes it. */
  private static void forwardLive(ResponseChannel channel, JsonObject body, long[] lastSent) {
    Long seq = body.getLong("seq");
    // a gateway of the previous release publishes {"id"} under its own numbering: not an id of this stream
    if (seq != null && seq > lastSent[0]) {
      lastSent[0] = seq;
      channel.forward(new EventId(EventId.GET_STREAM, seq), body.getJsonObject("message"));
    }
  }
}
