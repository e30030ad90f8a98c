package dev.tidemark.gateway.impl.era;

import dev.tidemark.telemetry.tracing.Traces;
import io.opentelemetry.context.Context;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The trace a request joins: the W3C {@code traceparent} (with its {@code tracestate}) in
 * {@code params._meta}, where MCP clients put it so that it travels with the message whatever
 * carries it, else the HTTP headers, which an HTTP client's own instrumentation sets. The
 * propagator checks the value; anything malformed, repeated or of the wrong type starts a new
 * trace rather than failing the request.
 */
final class TraceParents {

  private TraceParents() {}

  static Context of(MultiMap headers, JsonObject meta) {
    if (meta != null && meta.getValue(Traces.TRACEPARENT) instanceof String traceparent) {
      return Traces.extract(traceparent, meta.getValue(Traces.TRACESTATE) instanceof String s ? s : null);
    }
    List<String> traceparents = headers.getAll(Traces.TRACEPARENT);
    if (traceparents.size() != 1) {
      return Context.root(); // none, or several, which W3C Trace Context calls invalid
    }
    // several tracestate headers are one list, joined by commas (W3C Trace Context)
    List<String> tracestates = headers.getAll(Traces.TRACESTATE);
    return Traces.extract(traceparents.get(0), tracestates.isEmpty() ? null : String.join(",", tracestates));
  }
}
