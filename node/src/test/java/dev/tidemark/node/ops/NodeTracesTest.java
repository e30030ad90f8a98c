package dev.tidemark.node.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.TracingConfig;
import dev.tidemark.telemetry.tracing.Traces;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import org.junit.jupiter.api.Test;

class NodeTracesTest {

  private static final String SAMPLED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  private static final String NOT_SAMPLED = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";

  private static SpanContext child(OpenTelemetrySdk sdk, String traceparent) {
    Span span = sdk.getTracer(Traces.SCOPE).spanBuilder("t").setParent(Traces.extract(traceparent, null)).startSpan();
    span.end();
    return span.getSpanContext();
  }

  @Test
  void withoutAnExporterACallStillGetsATraceToLogAndPassOn() {
    OpenTelemetrySdk sdk = NodeTraces.create(new TracingConfig("", 1.0, "tidemark"), "n-1", "0");
    try {
      assertTrue(child(sdk, null).isValid(), "a new trace, not an invalid span");
      assertEquals("0af7651916cd43dd8448eb211c80319c", child(sdk, SAMPLED).getTraceId());
    } finally {
      sdk.shutdown();
    }
  }

  @Test
  void theRatioDecidesNewTracesAndTheParentsFlagDecidesTheRest() {
    OpenTelemetrySdk none = NodeTraces.create(new TracingConfig("", 0.0, "tidemark"), "n-1", "0");
    OpenTelemetrySdk all = NodeTraces.create(new TracingConfig("", 1.0, "tidemark"), "n-1", "0");
    try {
      assertFalse(child(none, null).isSampled());
      assertTrue(child(none, null).isValid(), "unsampled, yet a trace id to log");
      assertTrue(child(none, SAMPLED).isSampled(), "a sampled parent is followed");
      assertTrue(child(all, null).isSampled());
      assertFalse(child(all, NOT_SAMPLED).isSampled(), "an unsampled parent is followed");
    } finally {
      none.shutdown();
      all.shutdown();
    }
  }
}
