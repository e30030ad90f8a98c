package dev.tidemark.telemetry.tracing;

import dev.tidemark.telemetry.LogContext;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.shareddata.Shareable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The traces of one node: its OpenTelemetry instance, found through its Vert.x instance (several
 * nodes share a JVM in the tests, and each must export only its own spans, so nothing here is
 * global), the W3C trace context every hop carries, and the span of the request that runs now.
 *
 * <p>The span of a request lives on the request's Vert.x context, as its log ids do
 * ({@link LogContext}): OpenTelemetry's own current context is a thread-local, and an event loop
 * runs the steps of many requests in turn.
 *
 * <p>A span's name and attributes come from fixed sets (a method the gateway serves, a tool of the
 * catalogue, an error code), never from what a caller sent or read: no SQL, no value, no token.
 */
public final class Traces {

  /** The W3C header, and the key of the same value in a 2026-07-28 request's {@code _meta}. */
  public static final String TRACEPARENT = "traceparent";
  public static final String TRACESTATE = "tracestate";

  /** The method a gateway span served (OpenTelemetry's MCP conventions). */
  public static final AttributeKey<String> METHOD = AttributeKey.stringKey("mcp.method.name");
  /** The tool a span ran: a catalogue name, or {@code other}. */
  public static final AttributeKey<String> TOOL = AttributeKey.stringKey("gen_ai.tool.name");
  /** How a call ended: {@code ok}, an error code or {@code protocol_error}, as the metrics count it. */
  public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("tidemark.outcome");
  /** The outcome again, only when the call failed (OpenTelemetry's general error attribute). */
  public static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  /** The instrumentation scope of every Tidemark span. */
  public static final String SCOPE = "dev.tidemark";

  private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();
  private static final String MAP = "tidemark.traces";
  private static final String KEY = "node";
  private static final String CONTEXT_KEY = "tidemark.trace-context";

  private record Installed(OpenTelemetry otel) implements Shareable {}

  private static final TextMapGetter<Map<String, String>> MAP_GETTER = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Map<String, String> carrier) {
      return carrier.keySet();
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  };

  private Traces() {}

  /** Makes {@code otel} the instance the roles of {@code vertx} trace with. */
  public static void install(Vertx vertx, OpenTelemetry otel) {
    vertx.sharedData().getLocalMap(MAP).put(KEY, new Installed(otel));
  }

  /**
   * The tracer of the node {@code vertx} belongs to; a role deployed without a node gets one that
   * records nothing but still carries a parent's context on.
   */
  public static Tracer tracer(Vertx vertx) {
    Object installed = vertx.sharedData().getLocalMap(MAP).get(KEY);
    return (installed instanceof Installed i ? i.otel() : OpenTelemetry.noop()).getTracer(SCOPE);
  }

  /**
   * The remote parent named by a {@code traceparent} and {@code tracestate} pair, or the root
   * context when there is none or it is malformed (the propagator checks it; a bad one starts a
   * new trace rather than failing the call).
   */
  public static Context extract(String traceparent, String tracestate) {
    if (traceparent == null || traceparent.isEmpty()) {
      return Context.root();
    }
    Map<String, String> carrier = new HashMap<>(2);
    carrier.put(TRACEPARENT, traceparent);
    if (tracestate != null && !tracestate.isEmpty()) {
      carrier.put(TRACESTATE, tracestate);
    }
    return W3C.extract(Context.root(), carrier, MAP_GETTER);
  }

  /** The {@code traceparent} and {@code tracestate} that name {@code context}'s span; empty when it has none. */
  public static Map<String, String> inject(Context context) {
    Map<String, String> carrier = new HashMap<>(2);
    W3C.inject(context, carrier, Map::put);
    return carrier;
  }

  /** The headers W3C propagation reads, for carriers that must be asked by name. */
  public static List<String> fields() {
    return List.copyOf(W3C.fields());
  }

  /**
   * Makes {@code context} (a span's) the trace of the request running now, and names its trace id
   * on every later log line of the request. Outside a request it only returns.
   */
  public static void attach(Context context) {
    ContextInternal request = request();
    if (request != null) {
      request.localContextData().put(CONTEXT_KEY, context);
    }
    SpanContext span = Span.fromContext(context).getSpanContext();
    if (span.isValid()) {
      LogContext.put(LogContext.TRACE_ID, span.getTraceId());
    }
  }

  /** The trace of the request running now (what {@link #attach} put there), or the root context. */
  public static Context current() {
    ContextInternal request = request();
    Object context = request == null ? null : request.localContextData().get(CONTEXT_KEY);
    return context instanceof Context c ? c : Context.root();
  }

  private static ContextInternal request() {
    io.vertx.core.Context ctx = Vertx.currentContext();
    // the event loop's own context is shared by every request it serves: only a duplicate is one request's
    return ctx instanceof ContextInternal c && c.isDuplicate() ? c : null;
  }
}
