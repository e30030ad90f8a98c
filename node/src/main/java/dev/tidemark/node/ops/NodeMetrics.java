package dev.tidemark.node.ops;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.metrics.MetricsOptions;
import io.vertx.micrometer.Label;
import io.vertx.micrometer.MetricsDomain;
import io.vertx.micrometer.MicrometerMetricsOptions;
import java.util.EnumSet;

/**
 * The Prometheus registry of one node and the Vert.x metrics that feed it: HTTP server requests,
 * the event bus, the database and worker pools, and the JVM.
 *
 * <p>Labels are chosen so that none carries a caller's data: the HTTP path is left out (a caller
 * picks it; the route, fixed by the router, is kept), so is the event-bus address (some name a
 * session), and so are remote addresses. Client, datagram and raw TCP meters are left off: nothing
 * an operator watches lives there, and each would add series to every scrape.
 */
public final class NodeMetrics {

  private NodeMetrics() {}

  public static PrometheusMeterRegistry newRegistry() {
    return new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  }

  public static MetricsOptions vertxOptions() {
    return new MicrometerMetricsOptions()
        .setEnabled(true)
        .setJvmMetricsEnabled(true)
        .setLabels(EnumSet.of(Label.HTTP_METHOD, Label.HTTP_CODE, Label.HTTP_ROUTE, Label.EB_SIDE, Label.EB_FAILURE,
            Label.POOL_TYPE, Label.POOL_NAME, Label.NAMESPACE))
        .addDisabledMetricsCategory(MetricsDomain.NET_SERVER)
        .addDisabledMetricsCategory(MetricsDomain.NET_CLIENT)
        .addDisabledMetricsCategory(MetricsDomain.HTTP_CLIENT)
        .addDisabledMetricsCategory(MetricsDomain.DATAGRAM_SOCKET)
        .addDisabledMetricsCategory(MetricsDomain.VERTICLES);
  }
}
