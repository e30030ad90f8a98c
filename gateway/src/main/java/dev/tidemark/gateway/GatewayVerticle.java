package dev.tidemark.gateway;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.gateway.impl.McpEndpoint;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;

/**
 * The gateway role: the MCP endpoint over HTTP; tool calls go to the services over the event bus.
 * A node deploys one instance per event loop ({@code node.gateway-instances}), all listening on
 * {@code http.port}: Vert.x hands each new connection to the next instance, whose loop serves it
 * from then on. An instance holds its router and server; what the instances share is the node's
 * {@link GatewayNode}, which makes them.
 */
public final class GatewayVerticle extends VerticleBase {

  private final GatewayNode node;
  private McpEndpoint endpoint;
  private HttpServer server;

  GatewayVerticle(GatewayNode node) {
    this.node = node;
  }

  @Override
  public Future<?> start() {
    TidemarkConfig config = node.tidemarkConfig();
    Router router = Router.router(vertx);
    endpoint = new McpEndpoint(node.shared());
    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(sharedPort(config.http().port()))
        .setIdleTimeout(config.http().idleTimeoutSeconds())
        .setMaxInitialLineLength(8192)
        .setMaxHeaderSize(16384));
    server.connectionHandler(endpoint::opened);
    return endpoint.start(router).compose(v -> server.requestHandler(router).listen())
        .onSuccess(listening -> node.listening(listening.actualPort()))
        .recover(err -> Future.failedFuture(ConfigKey.HTTP_PORT.listenFailure(config.http().host(), config.http().port(), err)));
  }

  /**
   * The port every instance listens on. Vert.x gives each server that asks for port 0 a free port
   * of its own, which would leave each instance alone on a port; a negative port is its way of
   * asking for one free port shared by every server that names it, as a configured port is shared.
   */
  static int sharedPort(int configured) {
    return configured == 0 ? -1 : configured;
  }

  @Override
  public Future<?> stop() {
    Future<Void> streams = endpoint == null ? Future.succeededFuture() : endpoint.stop(context);
    return streams.compose(v -> server == null ? Future.succeededFuture() : server.close());
  }
}
