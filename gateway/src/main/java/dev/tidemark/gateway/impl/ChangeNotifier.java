package dev.tidemark.gateway.impl;

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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns committed changes into MCP notifications. Every gateway hears every change on its local
 * event bus; the first gateway to claim a change's position notifies its subscribers, wherever
 * they are connected, so a change is announced once however many gateways run.
 */
final class ChangeNotifier {

  private static final Logger LOG = LoggerFactory.getLogger(ChangeNotifier.class);
  static final String CLAIMS = "tidemark.notified.v1";
  /** A claim outlives any redelivery of the same change by a restarted relay. */
  static final long CLAIM_MILLIS = 10 * 60 * 1000L;

  private final Vertx vertx;
  private final String database;
  private final String nodeId;
  private final Subscriptions subscriptions;
  private final List<MessageConsumer<JsonObject>> consumers = new ArrayList<>();

  ChangeNotifier(Vertx vertx, String database, String nodeId, Subscriptions subscriptions) {
    this.vertx = vertx;
    this.database = database;
    this.nodeId = nodeId;
    this.subscriptions = subscriptions;
  }

  Future<Void> start() {
    consumers.add(vertx.eventBus().localConsumer(Addresses.changes(database), msg -> onChange(ChangeNotice.fromJson(msg.body()))));
    consumers.add(vertx.eventBus().localConsumer(Addresses.schemaChanges(database), msg -> onSchemaChange(SchemaChangeNotice.fromJson(msg.body()))));
    return Future.all(consumers.stream().map(MessageConsumer::completion).toList()).mapEmpty();
  }

  Future<Void> stop() {
    return Future.all(consumers.stream().map(MessageConsumer::unregister).toList()).mapEmpty();
  }

  private Future<Boolean> claim(String position) {
    return vertx.sharedData().<String, String>getAsyncMap(CLAIMS)
        .compose((AsyncMap<String, String> m) -> m.putIfAbsent(database + "|" + position, nodeId, CLAIM_MILLIS))
        .map(previous -> previous == null);
  }

  /**
   * A claim is a cluster-map write, which Hazelcast makes a blocking call on a worker thread; one
   * per change on every gateway filled the worker pools under a steady stream of changes and
   * delayed everything else queued there. So a gateway first reads whether anyone subscribes to
   * what changed, and claims only then.
   */
  private void onChange(ChangeNotice change) {
    String table = change.schema() + "." + change.table();
    List<String> uris = new ArrayList<>();
    uris.add(ResourceUris.table(table));
    List<String> key = ResourceUris.keyOf(change.key());
    if (key != null) {
      uris.add(ResourceUris.row(table, key));
    }
    uris.add(ResourceUris.CHANGES);
    subscriptions.anySubscriber(database, uris)
        .compose(any -> any ? claim(change.position()) : Future.succeededFuture(false))
        .compose(mine -> mine
            ? Future.join(uris.stream().map(uri -> subscriptions.resourceUpdated(database, uri)).toList()).<Void>mapEmpty()
            : Future.<Void>succeededFuture())
        .onFailure(err -> LOG.warn("could not notify the change at {}: {}", change.position(), err.toString()));
  }

  private void onSchemaChange(SchemaChangeNotice change) {
    claim(change.position()).compose(mine -> mine
        ? Future.join(subscriptions.resourcesListChanged(database), subscriptions.resourceUpdated(database, ResourceUris.SCHEMA)).mapEmpty()
        : Future.succeededFuture())
        .onFailure(err -> LOG.warn("could not notify the schema change at {}: {}", change.position(), err.toString()));
  }
}
