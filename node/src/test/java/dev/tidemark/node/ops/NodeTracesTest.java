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

  private static SpanContext child(io.opentelemetry.api.OpenTelemetry otel, String traceparent) {
    Span span = otel.getTracer(Traces.SCOPE).spanBuilder("t").setParent(Traces.extract(traceparent, null)).startSpan();
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

  @Test
  void withoutAnExporterCallsGetSpansThatAreOnlyTheirIdsAndTheSameDecisions() {
    OpenTelemetrySdk none = NodeTraces.create(new TracingConfig("", 0.0, "tidemark"), "n-1", "0");
    OpenTelemetrySdk all = NodeTraces.create(new TracingConfig("", 1.0, "tidemark"), "n-1", "0");
    try {
      io.opentelemetry.api.OpenTelemetry noneForCalls = NodeTraces.forCalls(none, new TracingConfig("", 0.0, "tidemark"));
      io.opentelemetry.api.OpenTelemetry allForCalls = NodeTraces.forCalls(all, new TracingConfig("", 1.0, "tidemark"));
      Span span = allForCalls.getTracer(Traces.SCOPE).spanBuilder("t").setAttribute(Traces.TOOL, "get_row").startSpan();
      assertFalse(span.isRecording(), "nothing is recorded for a span no one exports");
      assertTrue(span.getSpanContext().isValid(), "a new trace, with an id to log and pass on");
      assertFalse(child(noneForCalls, null).isSampled());
      assertTrue(child(noneForCalls, null).isValid(), "unsampled, yet a trace id to log");
      assertTrue(child(noneForCalls, SAMPLED).isSampled(), "a sampled parent is followed");
      assertTrue(child(allForCalls, null).isSampled());
      assertFalse(child(allForCalls, NOT_SAMPLED).isSampled(), "an unsampled parent is followed");
      SpanContext joined = child(allForCalls, SAMPLED);
      assertEquals("0af7651916cd43dd8448eb211c80319c", joined.getTraceId());
      assertFalse(joined.getSpanId().equals("b7ad6b7169203331"), "a span id of its own");
      java.util.Map<String, String> carried = Traces.inject(io.opentelemetry.context.Context.root().with(Span.wrap(joined)));
      assertEquals("00-0af7651916cd43dd8448eb211c80319c-" + joined.getSpanId() + "-01", carried.get(Traces.TRACEPARENT));
    } finally {
      none.shutdown();
      all.shutdown();
    }
  }

  @Test
  void withAnExporterCallsAreTracedByTheSdk() {
    TracingConfig exporting = new TracingConfig("http://127.0.0.1:1/v1/traces", 1.0, "tidemark");
    OpenTelemetrySdk sdk = NodeTraces.create(exporting, "n-1", "0");
    try {
      assertTrue(NodeTraces.forCalls(sdk, exporting) == sdk);
      assertTrue(sdk.getTracer(Traces.SCOPE).spanBuilder("t").startSpan().isRecording());
    } finally {
      sdk.shutdown();
    }
  }
}
