package dev.tidemark.console.impl;

import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.GatewayActivity;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.util.ArrayList;
import java.util.List;

/**
 * Each node's gateway activity shared with the cluster: every few seconds a node puts what its
 * gateway saw of the last hour into a cluster map under its own id, with a time to live, so that
 * any node's console shows every node's and a node that died drops out by itself.
 */
final class ActivityBoard {

  static final long PUBLISH_MS = 5_000;
  static final long TTL_MS = 30_000;

  private final Vertx vertx;
  private final String nodeId;
  private final GatewayActivity activity;

  ActivityBoard(Vertx vertx, String nodeId, GatewayActivity activity) {
    this.vertx = vertx;
    this.nodeId = nodeId;
    this.activity = activity;
  }

  /** Publishes now and then every {@link #PUBLISH_MS}, on the caller's context (the gateway's: its timers end with it). */
  void start() {
    publish();
    vertx.setPeriodic(PUBLISH_MS, t -> publish());
  }

  private Future<Void> publish() {
    JsonObject mine = mine();
    return map().compose(m -> m.put(nodeId, mine, TTL_MS)).recover(err -> Future.succeededFuture());
  }

  private JsonObject mine() {
    return new JsonObject().put("node", nodeId).put("at", System.currentTimeMillis()).put("callers", activity.snapshot());
  }

  /** Every node's latest report, this node's as of now. */
  Future<List<JsonObject>> all() {
    return map().compose(AsyncMap::entries).map(entries -> {
      List<JsonObject> out = new ArrayList<>();
      entries.forEach((node, report) -> {
        if (!node.equals(nodeId)) {
          out.add(report);
        }
      });
      out.add(0, mine());
      return out;
    });
  }

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.CONSOLE_ACTIVITY_MAP);
  }
}
