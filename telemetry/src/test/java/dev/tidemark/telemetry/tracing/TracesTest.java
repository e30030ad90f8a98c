package dev.tidemark.telemetry.tracing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import io.vertx.core.Vertx;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TracesTest {

  private static final String TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  @Test
  void aTraceparentRoundTripsWithItsTracestate() {
    Context parent = Traces.extract(TRACEPARENT, "vendor=x");
    SpanContext span = Span.fromContext(parent).getSpanContext();
    assertTrue(span.isRemote());
    assertEquals("0af7651916cd43dd8448eb211c80319c", span.getTraceId());
    assertEquals("b7ad6b7169203331", span.getSpanId());
    assertTrue(span.isSampled());
    assertEquals(Map.of("traceparent", TRACEPARENT, "tracestate", "vendor=x"), Traces.inject(parent));
  }

  @Test
  void aMalformedOrMissingTraceparentStartsNoTraceAndInjectsNothing() {
    for (String bad : new String[] {null, "", "garbage", "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01; drop table"}) {
      Context context = Traces.extract(bad, "vendor=x");
      assertFalse(Span.fromContext(context).getSpanContext().isValid(), String.valueOf(bad));
      assertEquals(Map.of(), Traces.inject(context), String.valueOf(bad));
    }
  }

  @Test
  void aNodeWithoutAnSdkStillCarriesTheParentOn() {
    Vertx vertx = Vertx.vertx();
    try {
      Context parent = Traces.extract(TRACEPARENT, null);
      Span span = Traces.tracer(vertx).spanBuilder("query get_row").setParent(parent).startSpan();
      assertEquals(TRACEPARENT, Traces.inject(parent.with(span)).get("traceparent"), "a span that records nothing keeps its parent's context");
    } finally {
      vertx.close();
    }
  }

  @Test
  void theCurrentTraceIsTheOneAttachedToTheRequestAndNoOtherRequestSeesIt() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      Context parent = Traces.extract(TRACEPARENT, null);
      var first = ((io.vertx.core.internal.ContextInternal) vertx.getOrCreateContext()).duplicate();
      var second = ((io.vertx.core.internal.ContextInternal) vertx.getOrCreateContext()).duplicate();
      java.util.concurrent.CompletableFuture<String> seen = new java.util.concurrent.CompletableFuture<>();
      first.runOnContext(v -> {
        Traces.attach(parent);
        second.runOnContext(w -> seen.complete(Traces.inject(Traces.current()).getOrDefault("traceparent", "none") + "|"
            + first.localContextData().containsKey("tidemark.trace-context")));
      });
      assertEquals("none|true", seen.get(10, java.util.concurrent.TimeUnit.SECONDS));
      assertEquals(Context.root(), Traces.current(), "off a request there is no trace");
    } finally {
      vertx.close();
    }
  }
}
