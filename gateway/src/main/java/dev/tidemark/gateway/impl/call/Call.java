package dev.tidemark.gateway.impl.call;

import dev.tidemark.contract.Caller;
import io.opentelemetry.context.Context;
import io.vertx.core.json.JsonObject;

/**
 * One JSON-RPC request as the gateway runs it, whichever era it came in: who asks, for which
 * database, the session (2025-11-25 only), and where its messages go. {@code authenticatedAtNanos}
 * is when its credentials were checked, so that a revocation heard since can end it. {@code trace}
 * is the trace the client asked it to join (the root context when none), the parent of its span.
 * {@code toolset} is the toolset its path names, whose tools alone it sees and calls; null for none.
 */
public record Call(
    boolean modern,
    Caller caller,
    String database,
    String sessionId,
    JsonObject session,
    Object id,
    String method,
    JsonObject params,
    ResponseChannel channel,
    String protocolVersion,
    JsonObject clientCapabilities,
    String logLevel,
    Object progressToken,
    JsonObject inputResponses,
    Cancellation cancellation,
    long authenticatedAtNanos,
    Context trace,
    String toolset) {

  public Call {
    trace = trace == null ? Context.root() : trace;
  }

  /** A call at a path that names no toolset. */
  public Call(boolean modern, Caller caller, String database, String sessionId, JsonObject session, Object id, String method,
      JsonObject params, ResponseChannel channel, String protocolVersion, JsonObject clientCapabilities, String logLevel,
      Object progressToken, JsonObject inputResponses, Cancellation cancellation, long authenticatedAtNanos, Context trace) {
    this(modern, caller, database, sessionId, session, id, method, params, channel, protocolVersion, clientCapabilities, logLevel,
        progressToken, inputResponses, cancellation, authenticatedAtNanos, trace, null);
  }

  /** A stable key for cancellation: the session and the request id. */
  public String inflightKey() {
    return sessionId + "|" + io.vertx.core.json.Json.encode(id);
  }

  public boolean clientCan(String capability) {
    return clientCapabilities != null && clientCapabilities.containsKey(capability);
  }
}
