package dev.tidemark.gateway;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.runtime.NodeInfo;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.List;

/**
 * The gateway as a node deploys it (the node-wide part, then one endpoint per event loop over it),
 * in front of the roles of a {@code NodeHarness}: the front of the integration tests over MCP of
 * this module and of the modules whose tools it serves.
 */
public final class GatewayFront {

  private GatewayFront() {}

  /** Deploys the gateway on {@code vertx}; completes with the port its endpoints listen on. */
  public static Future<Integer> deploy(Vertx vertx, TidemarkConfig config, Authenticator auth, NodeInfo node) {
    GatewayNode gateway = new GatewayNode(node, config, auth, List.of());
    return vertx.deployVerticle(gateway)
        .compose(x -> vertx.deployVerticle(gateway::newInstance,
            new DeploymentOptions().setInstances(config.cluster().gatewayInstanceCount())))
        .map(x -> gateway.actualPort());
  }
}
