package dev.tidemark.node.ops;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig.OpsConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The operations endpoint every node serves, whatever its roles: liveness (the node's event loop
 * answers) and readiness (what the node's roles depend on is reachable: PostgreSQL for gateway,
 * query and command; Kafka for changelog; the cluster for all), and the node's metrics in
 * Prometheus text.
 */
public final class OpsVerticle extends VerticleBase {

  private final OpsConfig config;
  private final HealthChecks live;
  private final HealthChecks ready;
  private final PrometheusMeterRegistry metrics;
  private HttpServer server;

  public OpsVerticle(OpsConfig config, HealthChecks live, HealthChecks ready, PrometheusMeterRegistry metrics) {
    this.config = config;
    this.live = live;
    this.ready = ready;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    Router router = Router.router(vertx);
    router.get("/health/live").handler(ctx -> respond(ctx, live));
    router.get("/health/ready").handler(ctx -> respond(ctx, ready));
    // a scrape walks every meter and reads the JVM's beans: a worker's job, not the event loop's
    router.get("/metrics").handler(ctx -> vertx.executeBlocking(metrics::scrape, false)
        .onSuccess(text -> ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8").end(text))
        .onFailure(ctx::fail));
    server = vertx.createHttpServer();
    return server.requestHandler(router).listen(config.port(), config.host())
        .recover(err -> Future.failedFuture(ConfigKey.OPS_PORT.listenFailure(config.host(), config.port(), err)));
  }

  @Override
  public Future<?> stop() {
    return server == null ? Future.succeededFuture() : server.close();
  }

  public int actualPort() {
    return server.actualPort();
  }

  private static void respond(RoutingContext ctx, HealthChecks checks) {
    checks.checkStatus().onComplete(ar -> {
      boolean up = ar.succeeded() && ar.result().getUp();
      var body = ar.succeeded() ? ar.result().toJson() : new io.vertx.core.json.JsonObject().put("status", "DOWN");
      ctx.response()
          .setStatusCode(up ? 200 : 503)
          .putHeader("Content-Type", "application/json")
          .end(body.encode());
    });
  }
}
