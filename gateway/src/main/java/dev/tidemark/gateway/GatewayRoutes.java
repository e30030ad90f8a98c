package dev.tidemark.gateway;

import io.vertx.core.Future;
import io.vertx.ext.web.Router;

/**
 * Pages served on the gateway's own port beside the MCP endpoint, each on a path of its own (the
 * console). The gateway mounts them on its router when it starts, on its verticle's context, so
 * that timers they set end with it; a path the endpoint serves is never theirs.
 */
public interface GatewayRoutes {

  /** Adds the routes to {@code router}; the gateway listens once every mount completed. */
  Future<Void> mount(Router router);
}
