package dev.tidemark.gateway.impl.resource;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.SchemaChangeNotice;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns committed changes into MCP notifications. Every gateway hears every change on its local
 * event bus; the first gateway to claim a change's position notifies its subscribers, wherever
 * they are connected, so one gateway answers for each change however many run. A gateway
 * notifies one resource at most once per {@link #MIN_INTERVAL_MILLIS}, and every change is
 * followed by a notification of each resource it touched that someone subscribes to.
 *
 * <p>One per node and database, however many gateway instances the node runs: its consumers are
 * registered on the context of the node's gateway part, so every change, claim and timer of it runs
 * there, one at a time, and a change is claimed once per node, not once per event loop.
 */
public final class ChangeNotifier {

  private static final Logger LOG = LoggerFactory.getLogger(ChangeNotifier.class);
  /** A claim outlives any redelivery of the same change by a restarted relay. */
  static final long CLAIM_MILLIS = 10 * 60 * 1000L;
  /**
   * The shortest time between two notifications of one resource from one gateway: a client learns
   * of a change within about this long plus the pipeline's latency, and gets at most 50 a second.
   */
  static final long MIN_INTERVAL_MILLIS = 20;
  private static final int MAX_REMEMBERED = 100_000;

  private final Vertx vertx;
  private final String database;
  private final String nodeId;
  private final Subscriptions subscriptions;
  private final List<MessageConsumer<JsonObject>> consumers = new ArrayList<>();
  /** The resources with a notification waiting for its interval, and the waiting timer. */
  private final Map<String, Long> due = new ConcurrentHashMap<>();
  /** When this gateway last notified each resource. */
  private final Map<String, Long> lastSent = new ConcurrentHashMap<>();

  public ChangeNotifier(Vertx vertx, String database, String nodeId, Subscriptions subscriptions) {
    this.vertx = vertx;
    this.database = database;
    this.nodeId = nodeId;
    this.subscriptions = subscriptions;
  }

  public Future<Void> start() {
    consumers.add(vertx.eventBus().localConsumer(Addresses.changes(database), msg -> onChange(ChangeNotice.fromJson(msg.body()))));
    consumers.add(vertx.eventBus().localConsumer(Addresses.schemaChanges(database), msg -> onSchemaChange(SchemaChangeNotice.fromJson(msg.body()))));
    return Future.all(consumers.stream().map(MessageConsumer::completion).toList()).mapEmpty();
  }

  /** Sends what is due at once: no other gateway would, since this one claimed those changes. */
  public Future<Void> stop() {
    List<Future<Void>> flushed = new ArrayList<>();
    for (String uri : List.copyOf(due.keySet())) {
      Long timer = due.remove(uri);
      if (timer != null && vertx.cancelTimer(timer)) {
        flushed.add(subscriptions.resourceUpdated(database, uri).recover(err -> Future.succeededFuture()));
      }
    }
    return Future.join(flushed).transform(x -> Future.all(consumers.stream().map(MessageConsumer::unregister).toList())).mapEmpty();
  }

  private Future<Boolean> claim(String position) {
    return vertx.sharedData().<String, String>getAsyncMap(Addresses.NOTIFIED_MAP)
        .compose((AsyncMap<String, String> m) -> m.putIfAbsent(database + "|" + position, nodeId, CLAIM_MILLIS))
        .map(previous -> previous == null);
  }

  /**
   * A claim is a cluster-map write, which Hazelcast makes a blocking call on a worker thread; one
   * per change on every gateway filled the worker pools under a steady stream of changes and
   * delayed everything else queued there. So a gateway first reads which of the change's resources
   * anyone subscribes to, and claims only then, and not at all when a notification of each of them
   * is already due from this gateway.
   */
  private void onChange(ChangeNotice change) {
    if (subscriptions.noneKnown()) {
      return;
    }
    String table = change.schema() + "." + change.table();
    List<String> uris = new ArrayList<>();
    uris.add(ResourceUris.table(table));
    List<String> key = ResourceUris.keyOf(change.key());
    if (key != null) {
      uris.add(ResourceUris.row(table, key));
    }
    uris.add(ResourceUris.CHANGES);
    subscriptions.subscribed(database, uris)
        .compose(wanted -> wanted.isEmpty() || due.keySet().containsAll(wanted)
            ? Future.succeededFuture()
            : claim(change.position()).map(mine -> {
              if (mine) {
                wanted.forEach(this::announce);
              }
              return null;
            }))
        .onFailure(err -> LOG.warn("could not notify the change at {}: {}", change.position(), err.toString()));
  }

  /**
   * Announces that {@code uri} changed: at once when this gateway announced it more than
   * {@link #MIN_INTERVAL_MILLIS} ago, otherwise once that interval is over, then for every change
   * it heard of meanwhile. A notification carries no data (the client reads the resource again),
   * so one that arrives after a change tells the client everything a notification per change
   * would, and a table that changes 500 times a second costs a subscriber 50 notifications a
   * second from each gateway instead of 500.
   */
  private void announce(String uri) {
    if (due.containsKey(uri)) {
      return; // the notification already due covers this change too
    }
    long now = System.nanoTime();
    Long last = lastSent.get(uri);
    long waitNanos = last == null ? 0 : last + MIN_INTERVAL_MILLIS * 1_000_000L - now;
    if (waitNanos <= 0) {
      send(uri, now);
      return;
    }
    due.put(uri, vertx.setTimer(Math.max(1, waitNanos / 1_000_000L), t -> {
      due.remove(uri);
      send(uri, System.nanoTime());
    }));
  }

  private void send(String uri, long now) {
    lastSent.put(uri, now);
    if (lastSent.size() > MAX_REMEMBERED) {
      lastSent.clear(); // bounded: forgetting only lets the next notification go out at once
    }
    subscriptions.resourceUpdated(database, uri)
        .onFailure(err -> LOG.warn("could not notify subscribers of {}: {}", uri, err.toString()));
  }

  private void onSchemaChange(SchemaChangeNotice change) {
    claim(change.position()).compose(mine -> mine
        ? Future.join(subscriptions.resourcesListChanged(database), subscriptions.resourceUpdated(database, ResourceUris.SCHEMA)).mapEmpty()
        : Future.succeededFuture())
        .onFailure(err -> LOG.warn("could not notify the schema change at {}: {}", change.position(), err.toString()));
  }
}
