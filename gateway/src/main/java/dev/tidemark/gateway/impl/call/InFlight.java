package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.context.OwnContext;
import dev.tidemark.auth.Revocation;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.session.Revocations;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this node holds for callers beyond a plain request: calls running (by session and request
 * id, so that a cancellation published to every gateway finds the one that runs it) and streams
 * that stay open (GET and listen streams, closed gracefully when the node stops). A revoked token
 * ends what its caller holds here, wherever else it holds more.
 *
 * <p>One per node, shared by every gateway instance: a cancellation, a revocation or a drain is
 * heard once per node and must reach what every event loop holds. The registry is two concurrent
 * maps, and each {@link Held} remembers the context it was held on: its endings, which write to
 * its response, run there, never on the thread that heard the news.
 */
public final class InFlight {

  private static final Logger LOG = LoggerFactory.getLogger(InFlight.class);

  /**
   * How a held call or stream ends when the node stops or the call is cancelled, how it ends when
   * the token is revoked, and how it ends when a draining node can wait for it no longer (with a
   * hint to go on elsewhere); and the context it runs on, where each of them runs (null off any
   * context, as in a unit test: they then run at once).
   */
  public record Held(Caller caller, Runnable stop, Runnable revoke, Runnable drain, ContextInternal context) {
    /** Held on the calling context, the call's or the stream's own. */
    public Held(Caller caller, Runnable stop, Runnable revoke, Runnable drain) {
      this(caller, stop, revoke, drain, ContextInternal.current());
    }

    public Held(Caller caller, Runnable stop, Runnable revoke) {
      this(caller, stop, revoke, stop);
    }

    /** Whether {@code r} ends this call or stream: a revocation of its caller's credential, not of one it replaced. */
    boolean endedBy(Revocation r) {
      return caller.id().equals(r.callerId()) && caller.revokedBy(r.atMillis());
    }

    /** Runs {@code ending} on this call's or stream's own loop: at once when already there. */
    void run(Runnable ending) {
      if (context == null || context.inThread()) {
        ending.run();
      } else {
        context.runOnContext(v -> ending.run());
      }
    }

    /** Whether it was held on {@code instance}'s context, a gateway instance's (its requests run on duplicates of it). */
    boolean heldOn(Context instance) {
      return context != null && instance instanceof ContextInternal c && context.unwrap() == c.unwrap();
    }
  }

  private final Vertx vertx;
  private final Revocations revocations;
  private static final char KEY_END = '#';

  /** By the key each call is held under ({@link #heldKey}), one of its own. */
  private final Map<String, Held> calls = new ConcurrentHashMap<>();
  private final Map<String, Held> streams = new ConcurrentHashMap<>();
  private MessageConsumer<JsonObject> cancels;
  /** Completed when no call is held any more, once a drain asked for it. */
  private volatile Promise<Void> idle;

  public InFlight(Vertx vertx, Revocations revocations) {
    this.vertx = vertx;
    this.revocations = revocations;
  }

  /** Calls this gateway is running now. */
  public int callCount() {
    return calls.size();
  }

  /** GET and listen streams this gateway holds open. */
  public int streamCount() {
    return streams.size();
  }

  /** The GET and listen streams this gateway holds open, by caller id. */
  public Map<String, Integer> streamsByCaller() {
    Map<String, Integer> out = new java.util.HashMap<>();
    streams.values().forEach(h -> out.merge(h.caller().id(), 1, Integer::sum));
    return out;
  }

  public Future<Void> start() {
    cancels = vertx.eventBus().consumer(Addresses.GATEWAY_CANCEL_V1, msg -> cancel(msg.body().getString("key", "")));
    return cancels.completion();
  }

  /** The key a call is held under: the stable key a cancellation names, and a number of its own. */
  public static String heldKey(String stableKey, long number) {
    return stableKey + KEY_END + number;
  }

  /** Stops the calls held under {@code stableKey} (those a client sent with one id in one session at once, all of them). */
  void cancel(String stableKey) {
    String prefix = stableKey + KEY_END;
    calls.forEach((key, call) -> {
      if (key.startsWith(prefix) && calls.remove(key, call)) {
        call.run(call.stop());
      }
    });
  }

  /** Ends every open stream gracefully (listen streams get their completion result). */
  public void stopStreams() {
    new ArrayList<>(streams.values()).forEach(held -> held.run(held.stop()));
  }

  /** Ends the streams that the gateway instance of {@code instance} holds, as it stops: the others go on. */
  public void stopStreamsOf(Context instance) {
    new ArrayList<>(streams.values()).stream().filter(held -> held.heldOn(instance)).forEach(held -> held.run(held.stop()));
  }

  /**
   * Completes once no call is held here, or after {@code timeoutMillis}, whichever comes first.
   * No new call comes while the gateway drains, so the set only shrinks.
   */
  public Future<Void> callsDone(long timeoutMillis) {
    // whichever loop lets the last call go completes it; the drain goes on where it began
    Promise<Void> done = OwnContext.promise();
    idle = done;
    if (calls.isEmpty()) {
      done.tryComplete();
    }
    long timer = vertx.setTimer(timeoutMillis, t -> done.tryComplete());
    return done.future().onComplete(ar -> vertx.cancelTimer(timer));
  }

  /** Ends every open stream with a hint to reconnect elsewhere, as a drain begins. */
  public void drainStreams() {
    new ArrayList<>(streams.values()).forEach(held -> held.run(held.drain()));
  }

  /** Ends what a drain could not wait for: calls still running get an error that says to retry elsewhere, streams a retry hint. */
  public int endForDrain() {
    List<Held> cut = new ArrayList<>(calls.values());
    cut.forEach(h -> h.run(h.drain()));
    drainStreams();
    return cut.size();
  }

  public Future<Void> stop() {
    return cancels == null ? Future.succeededFuture() : cancels.unregister();
  }

  /**
   * A token stopped being valid: the authenticator already refuses it. Every gateway hears of it
   * itself, so each ends only what it holds: the caller's streams, its calls in flight (long polls
   * included), and the sessions of its streams; any other session of the caller is refused by
   * {@code SessionStore.find} wherever it is used.
   */
  public void revoked(Revocation r) {
    revocations.note(r);
    List<Held> ending = new ArrayList<>();
    for (Map<String, Held> held : List.of(streams, calls)) {
      held.values().stream().filter(h -> h.endedBy(r)).forEach(ending::add);
    }
    if (!ending.isEmpty()) {
      LOG.info("token of caller {} revoked: ending {} streams and calls on this node", r.callerId(), ending.size());
    }
    ending.forEach(h -> h.run(h.revoke()));
  }

  /** Holds a call; false when the caller's token was revoked since its credentials were checked, which ended it at once. */
  public boolean holdCall(String key, Held held, long authenticatedAtNanos) {
    hold(calls, key, held, authenticatedAtNanos);
    return calls.containsKey(key);
  }

  /** Lets a call go; false when it was let go already (cancelled or revoked), so that only one ending answers it. */
  public boolean releaseCall(String key) {
    boolean released = calls.remove(key) != null;
    Promise<Void> waiting = idle;
    if (waiting != null && calls.isEmpty()) {
      waiting.tryComplete();
    }
    return released;
  }

  public void holdStream(String key, Held held, long authenticatedAtNanos) {
    hold(streams, key, held, authenticatedAtNanos);
  }

  public void releaseStream(String key) {
    streams.remove(key);
  }

  /** Stops the stream held under {@code key}, if this node holds it. */
  public void stopStream(String key) {
    Held stream = streams.get(key);
    if (stream != null) {
      stream.run(stream.stop());
    }
  }

  /** The row read when the credentials were checked may have predated a revocation heard since: then the hold ends at once. */
  private void hold(Map<String, Held> map, String key, Held held, long authenticatedAtNanos) {
    map.put(key, held);
    if (revocations.heardSince(held.caller(), authenticatedAtNanos)) {
      held.run(held.revoke()); // held on this very context: at once, before the caller looks
    }
  }
}
