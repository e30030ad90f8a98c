package dev.tidemark.gateway.impl.resource;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.context.OwnContext;
import dev.tidemark.gateway.impl.session.EventLog;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who wants to hear about which resource, cluster-wide: legacy sessions (their events are kept for
 * replay and go to whichever gateway holds their GET stream) and 2026-07-28 listen streams (live
 * only, on the gateway that holds the stream). Any node can notify; delivery finds the holder.
 * One per node, shared by every gateway instance: the keys it knows are a concurrent map, and its
 * consumer and the index's refresh run once, on the context of the node's gateway part.
 */
public final class Subscriptions {

  private static final Logger LOG = LoggerFactory.getLogger(Subscriptions.class);

  /** The pseudo-URI under which receivers of list_changed notifications are kept. */
  public static final String LIST_CHANGED = "*list_changed*";
  /** The pseudo-URI of receivers of notifications/tools/list_changed: a listen stream asks for them apart. */
  public static final String TOOLS_LIST_CHANGED = "*tools_list_changed*";

  private static final int MAX_ATTEMPTS = 50;
  /** How often a gateway reads the index of subscribed keys again, in case it missed the publication of one. */
  static final long REFRESH_MS = 10_000;
  /**
   * The entry of the subscription map that lists its keys that have subscribers (it names no
   * database, so it is no resource's key). Reading it is one map read; listing the map's keys is an
   * operation on every member, which waits for a member that is leaving.
   */
  static final String INDEX_KEY = "*subscribed keys*";

  private final Vertx vertx;
  private final EventLog events;
  /**
   * The map's keys that may have subscribers, each with when this gateway last heard of it. Every
   * gateway hears every change, and three cluster-map reads for each change made the reads the
   * largest cost of a busy changelog; a key missing here costs no read. A gateway adds a key
   * before it answers the subscribe, so the gateway that took a subscription always knows of it,
   * and claims and announces its changes while others may not know of it yet.
   */
  private final Map<String, Long> known = new ConcurrentHashMap<>();
  private MessageConsumer<String> heard;
  /** The last index write this gateway asked for; the next one follows it. */
  private Future<Boolean> indexing = Future.succeededFuture(false);
  private long refreshTimer = -1;

  public Subscriptions(Vertx vertx, EventLog events) {
    this.vertx = vertx;
    this.events = events;
  }

  /** Hears of new subscriptions on every gateway, and reads the keys the map holds now. */
  public Future<Void> start() {
    heard = vertx.eventBus().consumer(Addresses.SUBSCRIBED_V1, msg -> known.put(msg.body(), System.nanoTime()));
    refreshTimer = vertx.setPeriodic(REFRESH_MS, t -> refresh());
    return heard.completion().compose(v -> refresh());
  }

  public Future<Void> stop() {
    vertx.cancelTimer(refreshTimer);
    return heard == null ? Future.succeededFuture() : heard.unregister();
  }

  /**
   * Keeps every key the index lists, and forgets those it no longer lists that no gateway published
   * since this read began (a key published after it may not be in the index read).
   */
  private Future<Void> refresh() {
    long began = System.nanoTime();
    return map().compose(m -> m.get(INDEX_KEY)).map(index -> {
      java.util.Set<String> keys = new java.util.HashSet<>();
      if (index != null) {
        index.forEach(k -> keys.add((String) k));
      }
      keys.forEach(k -> known.put(k, began));
      known.entrySet().removeIf(e -> e.getValue() < began && !keys.contains(e.getKey()));
      return null;
    });
  }

  /** A session that subscribed to {@code uri} as it wrote it; notifications carry that URI back. */
  public static String sessionTarget(String sessionId, String uri) {
    return "s:" + sessionId + " " + uri;
  }

  public static String listenerTarget(String listenerId, String uri) {
    return "l:" + listenerId + " " + uri;
  }

  private static String key(String database, String uri) {
    return database + "|" + uri;
  }

  private Future<AsyncMap<String, JsonArray>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.SUBSCRIPTIONS_MAP);
  }

  public Future<Void> add(String database, String uri, String target) {
    String key = key(database, uri);
    known.put(key, System.nanoTime());
    // the index is checked on every add, not only when the key's list was made: an earlier add
    // that failed between the two writes, or a removal racing this add, may have left it out
    return update(key, target, true, 0)
        .compose(created -> indexed(key, true))
        .map(v -> {
          known.put(key, System.nanoTime());
          vertx.eventBus().publish(Addresses.SUBSCRIBED_V1, key);
          return null;
        });
  }

  /** Removes every subscription of session {@code sessionId} in {@code held}. */
  public Future<Void> removeAll(String sessionId, List<SubscriptionHolders.Held> held) {
    return Future.join(held.stream().map(h -> remove(h.database(), h.key(), sessionTarget(sessionId, h.uri()))).toList()).mapEmpty();
  }

  /**
   * Adds {@code key} to the index, or removes it, after the index writes this gateway asked for
   * before: one at a time, so that a stream that subscribes to many resources at once does not
   * make its own writes of the one index entry fail each other. The chain is the node's, shared by
   * every gateway instance: a write runs where the one before it completed, and the caller hears of
   * it on its own loop.
   */
  private Future<Boolean> indexed(String key, boolean add) {
    synchronized (this) {
      Future<Boolean> next = indexing.transform(x -> update(INDEX_KEY, key, add, 0));
      indexing = next;
      return OwnContext.of(next);
    }
  }

  public Future<Void> remove(String database, String uri, String target) {
    String key = key(database, uri);
    return update(key, target, false, 0)
        .compose(emptied -> emptied ? indexed(key, false).compose(x -> map()).compose(m -> m.get(key))
            // an add on another gateway between the emptying and the index write keeps its key listed
            .compose(again -> again != null && !again.isEmpty() ? indexed(key, true) : Future.succeededFuture(false))
            : Future.succeededFuture(false))
        .mapEmpty();
  }

  /**
   * Adds {@code target} to the list under {@code key}, or removes it; true when that made the
   * list (an entry) or emptied it (removed the entry), which the index follows.
   */
  private Future<Boolean> update(String key, String target, boolean add, int attempt) {
    if (attempt >= MAX_ATTEMPTS) {
      return Future.failedFuture(new IllegalStateException("subscriptions stayed contended"));
    }
    return map().compose(m -> m.get(key).compose(current -> {
      JsonArray next = current == null ? new JsonArray() : current.copy();
      if (add == next.contains(target)) {
        return Future.succeededFuture(false);
      }
      if (add) {
        next.add(target);
      } else {
        next.remove(target);
      }
      Future<Boolean> written;
      if (current == null) {
        written = m.putIfAbsent(key, next).map(previous -> previous == null);
      } else if (next.isEmpty()) {
        written = m.removeIfPresent(key, current);
      } else {
        written = m.replaceIfPresent(key, current, next);
      }
      boolean flips = add ? current == null : next.isEmpty();
      return written.compose(ok -> ok ? Future.succeededFuture(flips) : update(key, target, add, attempt + 1));
    }));
  }

  /** True when this gateway knows of no subscription at all: a change then needs no look at all. */
  public boolean noneKnown() {
    return known.isEmpty();
  }

  /** Those of {@code uris} that someone subscribes to, in the order given; the reads run side by side. */
  public Future<List<String>> subscribed(String database, List<String> uris) {
    if (uris.stream().noneMatch(uri -> known.containsKey(key(database, uri)))) {
      return Future.succeededFuture(List.of());
    }
    // all of them, once any is known: the gateway that claims the change announces every URI of
    // it, so it must not leave out one it has not heard of yet (the gateway that took it would
    // lose the claim and announce nothing)
    return map().compose(m -> {
      List<Future<JsonArray>> reads = uris.stream().map(uri -> m.get(key(database, uri))).toList();
      return Future.all(reads).map(done -> {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < uris.size(); i++) {
          JsonArray targets = reads.get(i).result();
          if (targets != null && !targets.isEmpty()) {
            out.add(uris.get(i));
          }
        }
        return out;
      });
    });
  }

  /** Sends {@code notifications/resources/updated} to every subscriber of {@code uri} (its canonical form). */
  public Future<Void> resourceUpdated(String database, String uri) {
    return notify(database, uri, subscribed -> new JsonObject().put("jsonrpc", "2.0").put("method", McpMethods.NOTIFICATION_RESOURCE_UPDATED)
        .put("params", new JsonObject().put("uri", subscribed)));
  }

  /** Sends {@code notifications/resources/list_changed} to every receiver of list changes. */
  public Future<Void> resourcesListChanged(String database) {
    return notify(database, LIST_CHANGED, subscribed -> new JsonObject().put("jsonrpc", "2.0")
        .put("method", McpMethods.NOTIFICATION_RESOURCES_LIST_CHANGED).put("params", new JsonObject()));
  }

  /**
   * Sends {@code notifications/tools/list_changed} to every receiver of list changes: the tools a
   * database serves changed (a reload of its named tools).
   */
  public Future<Void> toolsListChanged(String database) {
    return notify(database, TOOLS_LIST_CHANGED, subscribed -> new JsonObject().put("jsonrpc", "2.0")
        .put("method", McpMethods.NOTIFICATION_TOOLS_LIST_CHANGED).put("params", new JsonObject()));
  }

  private Future<Void> notify(String database, String uri, java.util.function.Function<String, JsonObject> messageFor) {
    return map().compose(m -> m.get(key(database, uri))).compose(targets -> {
      if (targets == null) {
        return Future.succeededFuture();
      }
      List<Future<Void>> sent = new ArrayList<>();
      for (Object t : targets) {
        String target = (String) t;
        int space = target.indexOf(' ');
        JsonObject message = messageFor.apply(space < 0 ? uri : target.substring(space + 1));
        sent.add(deliver(database, uri, target, message).recover(err -> {
          // one receiver's trouble never stops the others
          LOG.warn("could not notify {} of {}: {}", target, uri, err.toString());
          return Future.succeededFuture();
        }));
      }
      return Future.join(sent).mapEmpty();
    });
  }

  private Future<Void> deliver(String database, String uri, String target, JsonObject message) {
    int space = target.indexOf(' ');
    String who = space < 0 ? target.substring(2) : target.substring(2, space);
    if (target.startsWith("s:")) {
      String sessionId = who;
      // stored first, so that a client holding no stream now gets it when it resumes
      return events.appendToGet(sessionId, message).map(id -> {
        vertx.eventBus().publish(Addresses.session(sessionId), new JsonObject().put("seq", id.seq()).put("message", message));
        return null;
      });
    }
    String listener = who;
    return vertx.eventBus().request(Addresses.listen(listener), message).<Void>mapEmpty()
        .recover(err -> err instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS
            ? remove(database, uri, target) // the stream is gone, with the node that held it
            : Future.succeededFuture());
  }
}
