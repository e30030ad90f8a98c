package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.telemetry.LogContext;
import dev.tidemark.telemetry.metrics.ToolCallMeters;
import dev.tidemark.telemetry.tracing.Traces;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Drain;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.http.Authentication;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;
import dev.tidemark.gateway.impl.call.ResponseChannel;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.vertx.core.AsyncResult;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one call, whichever era it came in: held in flight so that a cancellation or a revocation
 * can end it, dispatched through the method table, and answered on its channel, unless it was
 * cancelled, in which case no response follows. Each call is one server span, the child of the
 * trace the client named, and the trace of everything the call sends on.
 */
public final class CallRunner {

  private static final Logger LOG = LoggerFactory.getLogger(CallRunner.class);

  private static final AtomicLong KEYS = new AtomicLong();

  private final MethodTable methods;
  private final InFlight inFlight;
  private final ServerInfo info;
  private final Tracer tracer;

  public CallRunner(MethodTable methods, InFlight inFlight, ServerInfo info, Tracer tracer) {
    this.methods = methods;
    this.inFlight = inFlight;
    this.info = info;
    this.tracer = tracer;
  }

  public void run(Call call) {
    // every line logged while this call runs names its caller and session (docs/operations.md)
    LogContext.put(LogContext.CALLER_ID, call.caller().id());
    LogContext.put(LogContext.SESSION_ID, call.sessionId());
    Span span = span(call);
    // the service's span and the log lines of this call name this span's trace
    Traces.attach(call.trace().with(span));
    ResponseChannel channel = call.channel();
    // each call held under a key of its own, so that two calls that a client sent with one id in one
    // session (which JSON-RPC forbids, but two event loops can run at once) are answered both; a
    // 2025-11-25 cancellation finds its call by the stable key the held one starts with. A 2026-07-28
    // call is cancelled by closing its stream, never by its id (no '|', so no legacy key matches it)
    String key = InFlight.heldKey(call.modern() ? "call" : call.inflightKey(), KEYS.incrementAndGet());
    Runnable cancel = () -> {
      call.cancellation().cancel();
      channel.abandon();
    };
    Runnable revoke = () -> {
      if (inFlight.releaseCall(key)) {
        call.cancellation().cancel();
        channel.revoked(JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, Authentication.REVOKED_MESSAGE));
      }
    };
    // a draining node that can wait no longer stops the statement and says to send the call elsewhere
    Runnable cut = () -> {
      if (inFlight.releaseCall(key)) {
        call.cancellation().cancel();
        channel.finish(503, Drain.error(call.id(), Drain.CUT_MESSAGE));
      }
    };
    if (!inFlight.holdCall(key, new InFlight.Held(call.caller(), cancel, revoke, cut), call.authenticatedAtNanos())) {
      end(span, CANCELLED);
      return; // revoked while its credentials were being checked
    }
    if (call.modern()) {
      // closing the response stream is the cancellation on this era
      channel.onClose(() -> {
        if (inFlight.releaseCall(key)) {
          call.cancellation().cancel();
        }
      });
    }
    channel.open()
        .compose(v -> methods.dispatch(call))
        .onComplete(ar -> {
          if (inFlight.releaseCall(key)) {
            end(span, ar.failed() ? ToolCallMeters.PROTOCOL_ERROR : ToolCallMeters.outcome(ar.result()));
            answer(call, ar);
          } else {
            end(span, CANCELLED); // the request gets no response
          }
        });
  }

  /** The outcome of a call that was cancelled or revoked before it answered. */
  static final String CANCELLED = "cancelled";

  /**
   * Named by the method, and for tools/call by the tool, each from a fixed set: a method no handler
   * serves and a tool outside the catalogue are "other", so a client can put no text of its own in
   * a span.
   */
  private Span span(Call call) {
    String method = methods.serves(call) ? call.method() : ToolCallMeters.OTHER;
    String tool = McpMethods.TOOLS_CALL.equals(method) ? ToolCallMeters.toolLabel(call.params().getValue("name")) : null;
    SpanBuilder span = tracer.spanBuilder(tool == null ? method : method + " " + tool).setParent(call.trace())
        .setSpanKind(SpanKind.SERVER).setAttribute(Traces.METHOD, method);
    if (tool != null) {
      span.setAttribute(Traces.TOOL, tool);
    }
    return span.startSpan();
  }

  private static void end(Span span, String outcome) {
    span.setAttribute(Traces.OUTCOME, outcome);
    if (!ToolCallMeters.OK.equals(outcome)) {
      span.setAttribute(Traces.ERROR_TYPE, outcome);
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  private void answer(Call call, AsyncResult<JsonObject> ar) {
    JsonObject message;
    int status = 200;
    if (ar.succeeded()) {
      JsonObject result = ar.result();
      if (call.modern()) {
        result.put("resultType", result.getString("resultType", "complete"));
        result.put("_meta", result.getJsonObject("_meta", new JsonObject()).put(Meta.SERVER_INFO, info.serverInfo()));
      }
      message = JsonRpc.result(call.id(), result);
    } else if (ar.cause() instanceof RpcFailure f) {
      message = f.toMessage(call.id());
      status = f.httpStatus();
    } else {
      LOG.warn("{} failed", call.method(), ar.cause());
      message = JsonRpc.error(call.id(), JsonRpc.INTERNAL_ERROR, "Internal error; retry, and report it if it persists.");
    }
    call.channel().finish(status, message);
  }
}
