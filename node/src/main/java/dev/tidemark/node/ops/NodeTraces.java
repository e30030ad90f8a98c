package dev.tidemark.node.ops;

import dev.tidemark.config.TidemarkConfig.TracingConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.SdkTracerProviderBuilder;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.concurrent.TimeUnit;

/**
 * The OpenTelemetry SDK of one node. Built per node, never registered globally: the tests run
 * several nodes in one JVM, and each must name itself and export only its own spans; the roles
 * find it through their Vert.x instance ({@code Traces.tracer(vertx)}). Even without an exporter
 * a call without a {@code traceparent} gets a trace id to log and to pass on ({@link #forCalls}). Spans are exported in batches by the SDK's own thread, never on an event loop.
 */
public final class NodeTraces {

  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");
  private static final AttributeKey<String> SERVICE_INSTANCE_ID = AttributeKey.stringKey("service.instance.id");
  private static final AttributeKey<String> SERVICE_VERSION = AttributeKey.stringKey("service.version");

  private static final SpanProcessor KEEP_NOTHING = new SpanProcessor() {
    @Override
    public void onStart(Context parent, ReadWriteSpan span) {}

    @Override
    public boolean isStartRequired() {
      return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {}

    @Override
    public boolean isEndRequired() {
      return false;
    }
  };

  private NodeTraces() {}

  public static OpenTelemetrySdk create(TracingConfig config, String nodeId, String version) {
    Resource resource = Resource.getDefault().merge(Resource.create(Attributes.of(
        SERVICE_NAME, config.serviceName(), SERVICE_INSTANCE_ID, nodeId, SERVICE_VERSION, version)));
    SdkTracerProviderBuilder provider = SdkTracerProvider.builder()
        .setResource(resource)
        .setSampler(sampler(config));
    if (config.exports()) {
      provider.addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder()
          .setEndpoint(config.otlpEndpoint())
          .build()).build());
    } else {
      // the SDK hands out invalid spans, with no trace id to log or pass on, when no processor would see them
      provider.addSpanProcessor(KEEP_NOTHING);
    }
    return OpenTelemetrySdk.builder()
        .setTracerProvider(provider.build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
  }

  /**
   * What the node's roles trace calls with: the SDK itself when it exports, else spans that are
   * only their ids ({@link UnrecordedTraces}), with the same sampler and propagator, since a span
   * nobody will see is not worth building on every call.
   */
  public static OpenTelemetry forCalls(OpenTelemetrySdk sdk, TracingConfig config) {
    return config.exports() ? sdk : new UnrecordedTraces(sampler(config), sdk.getPropagators());
  }

  private static Sampler sampler(TracingConfig config) {
    // a caller's traceparent decides whether its trace is kept, so that no trace is kept in part
    return Sampler.parentBased(Sampler.traceIdRatioBased(config.sampleRatio()));
  }

  /** Exports what is still waiting, then stops; completes when that is done or after 10 s. */
  public static Future<Void> shutdown(OpenTelemetrySdk sdk) {
    Promise<Void> done = Promise.promise();
    CompletableResultCode code = sdk.shutdown();
    code.whenComplete(() -> done.tryComplete());
    return done.future().timeout(10, TimeUnit.SECONDS).otherwiseEmpty();
  }
}
