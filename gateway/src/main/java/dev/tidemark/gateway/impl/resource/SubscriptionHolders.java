package dev.tidemark.gateway.impl.resource;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig.SubscriptionLimits;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;

/**
 * The subscriptions each caller holds, cluster-wide, so that one caller's flood of subscriptions
 * stops at its own limits ({@code resources.max-subscriptions-per-session} and
 * {@code -per-caller}) wherever it subscribes: one entry per caller, rewritten with
 * compare-and-set, listing for each of its 2025-11-25 sessions the subscriptions it holds (what its
 * end removes) and for each of its listen streams how many and until when the stream's gateway
 * last vouched for it. A session that expired without ending still counts until the caller's next
 * subscription finds its limit reached: then the sessions the entry names are looked up, and those
 * gone are dropped, with their subscriptions. A listen stream's gateway renews it every 15 s; one
 * whose gateway died stops counting after {@link #LISTEN_LEASE_MILLIS}.
 */
public final class SubscriptionHolders {

  /** How long a listen stream counts after its gateway last renewed it. */
  static final long LISTEN_LEASE_MILLIS = 60_000;
  private static final int MAX_ATTEMPTS = 50;

  /** One subscription of a session: where the subscription map keeps it, and the URI as the client wrote it. */
  public record Held(String database, String key, String uri) {
    JsonArray toJson() {
      return new JsonArray().add(database).add(key).add(uri);
    }

    static Held fromJson(Object o) {
      JsonArray a = (JsonArray) o;
      return new Held(a.getString(0), a.getString(1), a.getString(2));
    }
  }

  private final Vertx vertx;
  private final SubscriptionLimits limits;
  /** Whether a session still exists, for the entries of sessions that expired without ending. */
  private final Function<String, Future<Boolean>> sessionExists;
  /** Takes what a session that is gone still held out of the subscription map. */
  private final BiFunction<String, List<Held>, Future<Void>> unsubscribe;
  private final LongSupplier clock;

  /**
   * @param sessionExists whether a session id still names a session
   * @param unsubscribe removes a session's subscriptions from the subscription map
   */
  public SubscriptionHolders(Vertx vertx, SubscriptionLimits limits, Function<String, Future<Boolean>> sessionExists,
      BiFunction<String, List<Held>, Future<Void>> unsubscribe) {
    this(vertx, limits, sessionExists, unsubscribe, System::currentTimeMillis);
  }

  SubscriptionHolders(Vertx vertx, SubscriptionLimits limits, Function<String, Future<Boolean>> sessionExists,
      BiFunction<String, List<Held>, Future<Void>> unsubscribe, LongSupplier clock) {
    this.vertx = vertx;
    this.limits = limits;
    this.sessionExists = sessionExists;
    this.unsubscribe = unsubscribe;
    this.clock = clock;
  }

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.SUBSCRIPTION_HOLDERS_MAP);
  }

  private static String session(String sessionId) {
    return "s:" + sessionId;
  }

  private static String listener(String listenerId) {
    return "l:" + listenerId;
  }

  /**
   * Counts {@code held} for the session; true when it is new (the caller then subscribes it), false
   * when the session holds it already. Refused with -32030 when the session or the caller is at
   * its most.
   */
  public Future<Boolean> addForSession(String callerId, String sessionId, Held held) {
    boolean[] added = {false};
    return change(callerId, true, entry -> {
      JsonObject holder = entry.getJsonObject(session(sessionId), new JsonObject());
      JsonArray subs = holder.getJsonArray("subs", new JsonArray());
      if (subs.contains(held.toJson())) {
        added[0] = false;
        return null; // nothing to write
      }
      if (subs.size() >= limits.perSession()) {
        throw refusal(ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_SESSION, limits.perSession(), "This session already holds its most of "
            + limits.perSession() + " subscriptions; unsubscribe from one (resources/unsubscribe) before you subscribe to another.");
      }
      if (count(entry) >= limits.perCaller()) {
        throw callerRefusal();
      }
      added[0] = true;
      JsonObject next = entry.copy();
      next.put(session(sessionId), holder.copy().put("subs", subs.copy().add(held.toJson())));
      return next;
    }).map(v -> added[0]);
  }

  /** No longer counts {@code held} for the session. */
  public Future<Void> removeForSession(String callerId, String sessionId, Held held) {
    return change(callerId, false, entry -> {
      JsonObject holder = entry.getJsonObject(session(sessionId));
      JsonArray subs = holder == null ? null : holder.getJsonArray("subs");
      if (subs == null || !subs.contains(held.toJson())) {
        return null;
      }
      JsonArray left = subs.copy();
      left.remove(held.toJson());
      JsonObject next = entry.copy();
      if (left.isEmpty()) {
        next.remove(session(sessionId));
      } else {
        next.put(session(sessionId), holder.copy().put("subs", left));
      }
      return next;
    }).mapEmpty();
  }

  /** The session ended: it holds nothing any more; completes with what it held, for the subscription map. */
  public Future<List<Held>> endSession(String callerId, String sessionId) {
    List<Held> held = new ArrayList<>();
    return change(callerId, false, entry -> {
      JsonObject holder = entry.getJsonObject(session(sessionId));
      if (holder == null) {
        return null;
      }
      held.clear();
      holder.getJsonArray("subs", new JsonArray()).forEach(h -> held.add(Held.fromJson(h)));
      JsonObject next = entry.copy();
      next.remove(session(sessionId));
      return next;
    }).map(v -> held);
  }

  /**
   * Counts a listen stream's {@code count} subscriptions for {@link #LISTEN_LEASE_MILLIS}; refused
   * with -32030 when they are more than one stream may hold or than the caller has left.
   */
  public Future<Void> holdListen(String callerId, String listenerId, int count) {
    if (count > limits.perSession()) {
      return Future.failedFuture(tooManyForOneStream(count));
    }
    return change(callerId, true, entry -> {
      if (count(entry) + count > limits.perCaller()) {
        throw callerRefusal();
      }
      return entry.copy().put(listener(listenerId), new JsonObject().put("n", count).put("until", clock.getAsLong() + LISTEN_LEASE_MILLIS));
    }).mapEmpty();
  }

  /** Resources one session or listen stream may subscribe to at once. */
  public int perSession() {
    return limits.perSession();
  }

  /** The refusal of a listen stream that names {@code count} resources, more than one stream may hold. */
  public RpcFailure tooManyForOneStream(int count) {
    return refusal(ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_SESSION, limits.perSession(), "A listen stream may subscribe to at most "
        + limits.perSession() + " resources, and this one names " + count + "; listen to fewer, or spread them over several streams.");
  }

  /** The listen stream is still open: it counts for another {@link #LISTEN_LEASE_MILLIS}. */
  public Future<Void> renewListen(String callerId, String listenerId) {
    return change(callerId, false, entry -> {
      JsonObject holder = entry.getJsonObject(listener(listenerId));
      return holder == null ? null
          : entry.copy().put(listener(listenerId), holder.copy().put("until", clock.getAsLong() + LISTEN_LEASE_MILLIS));
    }).mapEmpty();
  }

  public Future<Void> releaseListen(String callerId, String listenerId) {
    return change(callerId, false, entry -> {
      if (!entry.containsKey(listener(listenerId))) {
        return null;
      }
      JsonObject next = entry.copy();
      next.remove(listener(listenerId));
      return next;
    }).mapEmpty();
  }

  /** What the entry counts now: every subscription of its sessions, and of its listen streams whose lease runs. */
  private int count(JsonObject entry) {
    long now = clock.getAsLong();
    int n = 0;
    for (String holder : entry.fieldNames()) {
      JsonObject h = entry.getJsonObject(holder);
      if (holder.startsWith("s:")) {
        n += h.getJsonArray("subs", new JsonArray()).size();
      } else if (h.getLong("until", 0L) > now) {
        n += h.getInteger("n", 0);
      }
    }
    return n;
  }

  private RpcFailure callerRefusal() {
    return refusal(ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_CALLER, limits.perCaller(), "This caller already holds its most of "
        + limits.perCaller() + " subscriptions across its sessions and listen streams; unsubscribe from one, or end a session or a"
        + " stream it no longer uses, before you subscribe to another.");
  }

  static RpcFailure refusal(ConfigKey limit, int max, String message) {
    return new RpcFailure(JsonRpc.LIMIT_EXCEEDED, message + " Nothing was subscribed.", 200, new JsonObject()
        .put("code", ErrorCode.LIMIT_EXCEEDED.code()).put("limit", limit.key()).put("max", max).put("retriable", false));
  }

  /**
   * Rewrites the caller's entry with {@code next} (which returns null to leave it, or throws a
   * refusal) by compare-and-set. A refusal of the caller's limit when {@code tidy} first drops the
   * entry's sessions that are gone and listen streams whose lease ran out, and asks again.
   */
  private Future<Void> change(String callerId, boolean tidy, UnaryOperator<JsonObject> next) {
    return map().compose(m -> change(m, callerId, tidy, next, 0));
  }

  private Future<Void> change(AsyncMap<String, JsonObject> m, String callerId, boolean tidy, UnaryOperator<JsonObject> next, int attempt) {
    if (attempt >= MAX_ATTEMPTS) {
      return Future.failedFuture(new IllegalStateException("the subscriptions of a caller stayed contended"));
    }
    return m.get(callerId).compose(current -> {
      JsonObject entry = current == null ? new JsonObject() : current;
      JsonObject changed;
      try {
        changed = next.apply(entry);
      } catch (RpcFailure refused) {
        boolean callerLimit = refused.data() != null
            && ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_CALLER.key().equals(refused.data().getString("limit"));
        return tidy && callerLimit
            ? tidied(m, callerId, entry).compose(dropped -> dropped ? change(m, callerId, false, next, attempt + 1) : Future.failedFuture(refused))
            : Future.failedFuture(refused);
      }
      if (changed == null) {
        return Future.succeededFuture();
      }
      Future<Boolean> written = current == null ? m.putIfAbsent(callerId, changed).map(previous -> previous == null)
          : changed.isEmpty() ? m.removeIfPresent(callerId, current)
          : m.replaceIfPresent(callerId, current, changed);
      return written.compose(ok -> ok ? Future.succeededFuture() : change(m, callerId, tidy, next, attempt + 1));
    });
  }

  /** Drops the entry's sessions that are gone (their subscriptions too) and listen streams whose lease ran out; true when any was. */
  private Future<Boolean> tidied(AsyncMap<String, JsonObject> m, String callerId, JsonObject entry) {
    long now = clock.getAsLong();
    List<String> sessions = entry.fieldNames().stream().filter(h -> h.startsWith("s:")).toList();
    List<Future<Boolean>> alive = sessions.stream().map(h -> sessionExists.apply(h.substring(2))).toList();
    return Future.all(alive).compose(done -> {
      JsonObject kept = entry.copy();
      List<Future<Void>> unsubscribed = new ArrayList<>();
      for (int i = 0; i < sessions.size(); i++) {
        if (!alive.get(i).result()) {
          List<Held> held = new ArrayList<>();
          kept.getJsonObject(sessions.get(i)).getJsonArray("subs", new JsonArray()).forEach(h -> held.add(Held.fromJson(h)));
          unsubscribed.add(unsubscribe.apply(sessions.get(i).substring(2), held));
          kept.remove(sessions.get(i));
        }
      }
      entry.fieldNames().stream().filter(h -> h.startsWith("l:") && entry.getJsonObject(h).getLong("until", 0L) <= now).forEach(kept::remove);
      if (kept.size() == entry.size()) {
        return Future.succeededFuture(false);
      }
      Future<Boolean> written = kept.isEmpty() ? m.removeIfPresent(callerId, entry) : m.replaceIfPresent(callerId, entry, kept);
      // the subscriptions of a session that is gone leave the map whether or not this write won: nobody receives them
      return Future.join(unsubscribed).transform(x -> written).map(ok -> true);
    });
  }
}
