package dev.tidemark.gateway;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.gateway.impl.GatewayShared;
import dev.tidemark.gateway.impl.context.OwnContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.util.List;

/**
 * The gateway's node-wide part, deployed once per node before its instances ({@link GatewayVerticle},
 * one per event loop), as {@code FanOutVerticle} runs the node's changelog consumers once. It builds
 * what the instances share ({@link GatewayShared}: the connection slots, the per-caller cap, the
 * calls and streams in flight, sessions, subscriptions, revocations, the drain) and runs, on its own
 * context, what must hear the cluster once per node: cancellations, changes to notify, members that
 * left, revoked tokens, the gauges, and the start of the pages served beside the endpoint
 * ({@link GatewayRoutes}), which every instance then mounts. Its drain reaches every instance.
 */
public final class GatewayNode extends VerticleBase {

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Authenticator authenticator;
  private final List<McpExtension> extensions;
  private final GatewayActivity activity;
  private final List<GatewayRoutes> routes;
  private volatile GatewayShared shared;
  /** The port the instances listen on, once one listens; -1 before. */
  private volatile int port = -1;

  /**
   * @param authenticator null only when {@code auth.enabled} is false (a local test node)
   * @param extensions extra tools, resources and prompts; production passes none
   */
  public GatewayNode(NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions) {
    this(node, config, authenticator, extensions, new GatewayActivity(), List.of());
  }

  /**
   * @param activity where every instance counts what each caller does: the node's one, which the console reads
   * @param routes pages served beside the endpoint on paths of their own (the console): started here
   *     once, then mounted on every instance's router
   */
  public GatewayNode(NodeInfo node, TidemarkConfig config, Authenticator authenticator, List<McpExtension> extensions,
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
    shared = new GatewayShared(vertx, node, config, authenticator, extensions, activity);
    return shared.start().compose(v -> Future.all(routes.stream().map(GatewayRoutes::start).toList()));
  }

  @Override
  public Future<?> stop() {
    return shared == null ? Future.succeededFuture() : shared.stop();
  }

  /** A new instance of the endpoint, for one event loop; only once this part has started. */
  public GatewayVerticle newInstance() {
    if (shared == null) {
      throw new IllegalStateException("the gateway's instances are deployed after its node-wide part has started");
    }
    return new GatewayVerticle(this);
  }

  /**
   * The first part of a graceful stop: every instance refuses new requests with 503 (clients send
   * them to another gateway), streams on every loop end with a hint to reconnect elsewhere, and the
   * calls in flight get up to {@code timeoutMillis} to finish. Completes with how many calls were
   * cut at the timeout. The node's stop follows.
   */
  public Future<Integer> drain(long timeoutMillis) {
    GatewayShared parts = shared;
    if (parts == null) {
      return Future.succeededFuture(0);
    }
    // on this part's own context, where its timers run; each stream ends on its own loop
    Promise<Integer> drained = OwnContext.promise();
    context.runOnContext(v -> parts.drain(timeoutMillis).onComplete(drained));
    return drained.future();
  }

  /** The port the endpoint listens on (useful when the configured port was 0); -1 before an instance listens. */
  public int actualPort() {
    return port;
  }

  void listening(int actualPort) {
    port = actualPort;
  }

  List<GatewayRoutes> routes() {
    return routes;
  }

  TidemarkConfig tidemarkConfig() {
    return config;
  }

  GatewayShared shared() {
    return shared;
  }
}
