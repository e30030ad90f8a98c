package dev.tidemark.console;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.console.impl.ConsoleRoutes;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.gateway.GatewayActivity;
import dev.tidemark.gateway.GatewayRoutes;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.Router;
import io.vertx.sqlclient.Pool;
import java.util.Map;

/**
 * The console for the people who answer for the database, served by a gateway at console.path:
 * approvals, the audit trail with planned undo, the agents at work, and tokens. Built once per node
 * that runs the gateway role, when console.enabled is true, and mounted on each of its gateway
 * instances; it keeps no state of its own beyond what the cluster shares, so any gateway (and any
 * instance of one) serves any page of any sign-in.
 */
public final class Console implements GatewayRoutes {

  private final ConsoleRoutes routes;

  /**
   * @param pools Tidemark's login to each served database, by name (proposals, the changelog's tables, tokens in the default one)
   * @param authenticator the endpoint's own: a token or an OAuth access token signs a person in as it would admit an agent
   * @param activity what this node's gateway counts of its callers
   */
  public Console(Vertx vertx, NodeInfo node, TidemarkConfig config, Map<String, Pool> pools, Authenticator authenticator,
      GatewayActivity activity) {
    this.routes = new ConsoleRoutes(vertx, node, config, Map.copyOf(pools), authenticator, activity);
  }

  @Override
  public Future<Void> start() {
    return routes.start();
  }

  @Override
  public void mount(Router router) {
    routes.mount(router);
  }
}
