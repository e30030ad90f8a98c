package dev.tidemark.gateway;

import io.vertx.core.Future;
import io.vertx.ext.web.Router;

/**
 * Pages served on the gateway's own port beside the MCP endpoint, each on a path of its own (the
 * console). A node runs several gateway instances, each with its own router and HTTP server on the
 * shared port, so the pages start once per node and are then mounted on every instance's router; a
 * path the endpoint serves is never theirs.
 */
public interface GatewayRoutes {

  /**
   * What the pages need once per node (key rings, timers), on the gateway's node-wide context
   * ({@link GatewayNode}), so that its timers end with it; the instances mount only once it completed.
   */
  default Future<Void> start() {
    return Future.succeededFuture();
  }

  /** Adds the routes to one instance's router, once per instance; their handlers run on that instance's event loop. */
  void mount(Router router);
}
