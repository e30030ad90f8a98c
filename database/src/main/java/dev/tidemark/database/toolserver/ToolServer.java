package dev.tidemark.database.toolserver;

import dev.tidemark.database.SqlErrors;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.LocalDelivery;
import dev.tidemark.telemetry.LogContext;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.telemetry.metrics.ToolCallMeters;
import dev.tidemark.telemetry.tracing.Traces;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.vertx.core.Future;
import io.vertx.core.eventbus.Message;
import io.vertx.sqlclient.Pool;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * The server side of the tool-call seam, for the query and the command role (the client is the
 * gateway's, the message shapes are the contract's): a role answers its address here, {@code
 * health} by a round trip to PostgreSQL, {@code tools/call} by running the tool; every failure
 * becomes a tool error, classified by SQLSTATE, so the sender always gets a {@link ToolReply}. A
 * tool call is one span, the child of the span the request names, and the tool runs under that
 * span's trace context. {@link ServiceDrain} drains what a role still answers when it stops, and
 * {@link RunningRequests} tells a gateway whose member left which of its calls this node still runs.
 */
public final class ToolServer {

  private ToolServer() {}

  /** Completes once the message is answered, so that a draining node knows what it still runs. */
  public static Future<Void> answer(Message<?> msg, NodeInfo node, Pool pool, Tracer tracer,
      Function<ToolRequest, Future<ToolReply>> run, Logger log) {
    String action = msg.headers().get(Addresses.ACTION_HEADER);
    if (Actions.HEALTH.equals(action)) {
      return pool.query("SELECT 1").execute()
          .map(rows -> new ServiceHealth(node.nodeId(), true, null))
          .otherwise(err -> new ServiceHealth(node.nodeId(), false, "PostgreSQL: " + err.getMessage()))
          .map(h -> {
            msg.reply(h.toJson());
            return null;
          });
    }
    if (!Actions.TOOL_CALL.equals(action)) {
      msg.fail(400, "unknown action " + action);
      return Future.succeededFuture();
    }
    // from a gateway in this JVM the request is the object itself, and so is the reply (LocalDelivery)
    boolean local = msg.body() instanceof ToolRequest;
    ToolRequest request;
    try {
      request = LocalDelivery.request(msg.body());
    } catch (RuntimeException e) {
      msg.fail(400, "malformed tool request: " + e.getMessage());
      return Future.succeededFuture();
    }
    LogContext.put(LogContext.REQUEST_ID, request.requestId());
    LogContext.put(LogContext.CALLER_ID, request.caller().id());
    Context parent = Traces.extract(request.traceparent(), request.tracestate());
    Span span = span(tracer, parent, request.tool());
    Context traced = parent.with(span);
    Traces.attach(traced);
    Map<String, String> trace = Traces.inject(traced);
    // the tool hands PostgreSQL this span's context, the one that runs the statement
    ToolRequest running = request.withTrace(trace.get(Traces.TRACEPARENT), trace.get(Traces.TRACESTATE));
    Future<ToolReply> reply;
    try {
      reply = run.apply(running);
    } catch (RuntimeException e) {
      reply = Future.failedFuture(e);
    }
    io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
    if (!local && context != null) {
      // a call from another node's gateway, which asks this node whether it holds it when a member leaves
      RunningRequests.track(context.owner(), request.requestId(), reply);
    }
    return reply.recover(err -> Future.succeededFuture(ToolReply.failed(SqlErrors.toToolException(err))))
        .map(r -> {
          if (r.isError() && ErrorCode.INTERNAL.code().equals(r.error().getString("code"))) {
            log.warn("tool {} failed for request {}", request.tool(), request.requestId());
          }
          end(span, r);
          if (local) {
            msg.reply(r, LocalDelivery.reply());
          } else {
            msg.reply(r.toJson());
          }
          return null;
        });
  }

  /** {@code <service> <tool>}, such as {@code query get_row}: names from the catalogue only. */
  static Span span(Tracer tracer, Context parent, String requestedTool) {
    String tool = ToolCallMeters.toolLabel(requestedTool);
    String service = ToolCatalog.find(tool).map(ToolDescriptor::service).map(s -> s.name().toLowerCase(Locale.ROOT)).orElse(ToolCallMeters.OTHER);
    return tracer.spanBuilder(service + " " + tool).setParent(parent).setSpanKind(SpanKind.SERVER)
        .setAttribute(Traces.TOOL, tool).startSpan();
  }

  private static void end(Span span, ToolReply reply) {
    String outcome = reply.isError() ? errorCode(reply) : ToolCallMeters.OK;
    span.setAttribute(Traces.OUTCOME, outcome);
    if (reply.isError()) {
      span.setAttribute(Traces.ERROR_TYPE, outcome);
      span.setStatus(StatusCode.ERROR);
    }
    span.end();
  }

  /** The reply's error code when it is one of {@link ErrorCode}'s, so that a span never carries other text. */
  private static String errorCode(ToolReply reply) {
    return ErrorCode.of(reply.error().getString("code")).map(ErrorCode::code).orElse(ToolCallMeters.OTHER);
  }

}
