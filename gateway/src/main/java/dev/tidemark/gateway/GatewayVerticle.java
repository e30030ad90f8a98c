package dev.tidemark.gateway;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.gateway.impl.http.ConnectionSlots;
import dev.tidemark.gateway.impl.McpEndpoint;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.util.List;

/** The gateway role: the MCP endpoint over HTTP; tool calls go to the services over the event bus. */
public final class GatewayVerticle extends VerticleBase {

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final List<McpExtension> extensions;
  private final GatewayActivity activity;
  private final List<GatewayRoutes> routes;
  private McpEndpoint endpoint;
  private HttpServer server;

  /**
   * @param authenticator null only when {@code auth.enabled} is false (a local test node)
   * @param extensions extra tools, resources and prompts; production passes none
   */
  public GatewayVerticle(NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions) {
    this(node, config, authenticator, extensions, new GatewayActivity(), List.of());
  }

  /**
   * @param activity where the endpoint counts what each caller does (the node's one, which the console reads)
   * @param routes pages served beside the endpoint on paths of their own (the console)
   */
  public GatewayVerticle(NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions,
      GatewayActivity activity, List<GatewayRoutes> routes) {
    this.node = node;
    this.config = config;
    this.authenticator = authenticator;
    this.extensions = List.copyOf(extensions);
    this.activity = activity;
    this.routes = List.copyOf(routes);
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    ConnectionSlots slots = new ConnectionSlots(config.http().maxConnections(), config.http().maxUnauthenticatedConnections());
    endpoint = new McpEndpoint(vertx, node, config, authenticator, extensions, slots, activity);
    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(config.http().port())
        .setIdleTimeout(config.http().idleTimeoutSeconds())
        .setMaxInitialLineLength(8192)
        .setMaxHeaderSize(16384));
    server.connectionHandler(slots::opened);
    return endpoint.start(router)
        .compose(v -> Future.all(routes.stream().map(r -> r.mount(router)).toList()))
        .compose(v -> server.requestHandler(router).listen())
        .recover(err -> Future.failedFuture(ConfigKey.HTTP_PORT.listenFailure(config.http().host(), config.http().port(), err)));
  }

  @Override
  public Future<?> stop() {
    Future<Void> streams = endpoint == null ? Future.succeededFuture() : endpoint.stop();
    return streams.compose(v -> server == null ? Future.succeededFuture() : server.close());
  }

  /**
   * The first part of a graceful stop: new requests are refused with 503 (clients send them to
   * another gateway), streams end with a hint to reconnect elsewhere, and the calls in flight get
   * up to {@code timeoutMillis} to finish. Completes with how many calls were cut at the timeout.
   * The node's stop ({@link #stop()}) follows.
   */
  public Future<Integer> drain(long timeoutMillis) {
    if (endpoint == null) {
      return Future.succeededFuture(0);
    }
    // on the verticle's own context, where its connections and timers run
    Promise<Integer> drained = Promise.promise();
    context.runOnContext(v -> endpoint.drain(timeoutMillis).onComplete(drained));
    return drained.future();
  }

  /** The port the endpoint listens on; useful when the configured port was 0. */
  public int actualPort() {
    return server.actualPort();
  }
}
