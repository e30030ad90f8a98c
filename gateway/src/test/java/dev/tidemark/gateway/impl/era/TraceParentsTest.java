package dev.tidemark.gateway.impl.era;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class TraceParentsTest {

  private static final String HEADER_TRACE = "0af7651916cd43dd8448eb211c80319c";
  private static final String META_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String HEADER = "00-" + HEADER_TRACE + "-b7ad6b7169203331-01";
  private static final String META = "00-" + META_TRACE + "-00f067aa0ba902b7-01";

  private static SpanContext span(Context context) {
    return Span.fromContext(context).getSpanContext();
  }

  private static MultiMap headers(String... pairs) {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap();
    for (int i = 0; i < pairs.length; i += 2) {
      headers.add(pairs[i], pairs[i + 1]);
    }
    return headers;
  }

  @Test
  void theHeaderNamesTheParentWhenMetaHasNone() {
    Context parent = TraceParents.of(headers("Traceparent", HEADER, "tracestate", "a=1", "tracestate", "b=2"), new JsonObject());
    assertEquals(HEADER_TRACE, span(parent).getTraceId());
    assertEquals("b7ad6b7169203331", span(parent).getSpanId());
    assertEquals("1", span(parent).getTraceState().get("a"));
    assertEquals("2", span(parent).getTraceState().get("b"), "several tracestate headers are one list");
  }

  @Test
  void metaWinsOverTheHeaderBecauseItTravelsWithTheMessage() {
    Context parent = TraceParents.of(headers("traceparent", HEADER),
        new JsonObject().put("traceparent", META).put("tracestate", "m=1"));
    assertEquals(META_TRACE, span(parent).getTraceId());
    assertEquals("1", span(parent).getTraceState().get("m"));
  }

  @Test
  void nothingValidStartsANewTrace() {
    assertFalse(span(TraceParents.of(headers(), new JsonObject())).isValid(), "none");
    assertFalse(span(TraceParents.of(headers("traceparent", HEADER, "traceparent", HEADER), new JsonObject())).isValid(), "repeated");
    assertFalse(span(TraceParents.of(headers("traceparent", "not-a-traceparent"), new JsonObject())).isValid(), "malformed");
    assertFalse(span(TraceParents.of(headers(), new JsonObject().put("traceparent", 7))).isValid(), "not a string");
    assertFalse(span(TraceParents.of(headers("traceparent", HEADER), new JsonObject().put("traceparent", "bad"))).isValid(),
        "a malformed _meta value is not replaced by the header");
  }
}
