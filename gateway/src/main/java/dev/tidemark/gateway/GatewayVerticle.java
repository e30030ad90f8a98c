package dev.tidemark.gateway;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.gateway.impl.McpEndpoint;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;

/** The gateway role: the MCP endpoint over HTTP; tool calls go to the services over the event bus. */
public final class GatewayVerticle extends VerticleBase {

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private HttpServer server;

  /**
   * @param authenticator null only when {@code auth.enabled} is false (a local test node)
   */
  public GatewayVerticle(NodeInfo node, TidemarkConfig config, Authenticator authenticator) {
    this.node = node;
    this.config = config;
    this.authenticator = authenticator;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    new McpEndpoint(vertx, node, config, authenticator).mount(router);
    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(config.http().port())
        .setMaxInitialLineLength(8192)
        .setMaxHeaderSize(16384));
    return server.requestHandler(router).listen();
  }

  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.close();
  }

  /** The port the endpoint listens on; useful when the configured port was 0. */
  public int actualPort() {
    return server.actualPort();
  }
}
