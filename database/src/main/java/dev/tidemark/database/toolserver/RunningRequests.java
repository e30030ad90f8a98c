package dev.tidemark.database.toolserver;

import dev.tidemark.contract.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.spi.cluster.ClusterManager;

/**
 * The tool requests this node's services are answering, from receipt to reply, for the whole node
 * (every service verticle, of every database), so that a gateway that lost a member of the cluster
 * can ask the members that remain which of its calls in flight they hold: a call none of them holds
 * died with the member that left, and the gateway answers it at once instead of at the bus timeout.
 */
public final class RunningRequests {

  private static final String MAP = "tidemark.running-requests";

  private RunningRequests() {}

  private static LocalMap<String, Boolean> of(Vertx vertx) {
    return vertx.sharedData().getLocalMap(MAP);
  }

  /** Counts {@code requestId} as running on this node until {@code answered} completes. */
  static void track(Vertx vertx, String requestId, Future<?> answered) {
    LocalMap<String, Boolean> running = of(vertx);
    running.put(requestId, Boolean.TRUE);
    answered.onComplete(ar -> running.remove(requestId));
  }

  /** How many tool requests of other nodes' gateways this node is answering now. */
  public static int count(Vertx vertx) {
    return of(vertx).size();
  }

  /** Answers {@code tidemark.running.v1.<this node>}; a node that runs a service does so once. Nothing on a node outside a cluster. */
  public static Future<Void> serve(Vertx vertx) {
    ClusterManager cluster = vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
    if (cluster == null) {
      return Future.succeededFuture();
    }
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(Addresses.running(cluster.getNodeId()), msg -> {
      LocalMap<String, Boolean> running = of(vertx);
      JsonArray held = new JsonArray();
      msg.body().getJsonArray("request_ids", new JsonArray()).forEach(id -> {
        if (id instanceof String s && running.containsKey(s)) {
          held.add(s);
        }
      });
      msg.reply(new JsonObject().put("running", held));
    });
    return consumer.completion();
  }
}
