package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.json.JsonObject;

/**
 * Whether this gateway is draining before its node stops, and how it says so. A draining gateway
 * refuses every new request with 503 and {@code Retry-After}, so that a client (or the load
 * balancer in front of it) sends it again to another gateway, while the calls it already runs
 * finish here. What continues a call already running (a client's answer to a server request, a
 * cancellation) is still taken. One per node: every gateway instance reads the same flag.
 */
public final class Drain {

  /** Seconds a refused client should wait before it sends the request again; any other gateway may take it at once. */
  public static final int RETRY_AFTER_SECONDS = 1;
  public static final String REFUSED_MESSAGE =
      "This Tidemark node is draining before it stops and takes no new requests; send the request again, to another node.";
  public static final String CUT_MESSAGE = "This Tidemark node stopped before the call finished, and the call was cancelled;"
      + " send it again, to another node. A change sent with the same idempotency_key is applied at most once.";
  public static final String STREAM_MESSAGE =
      "This Tidemark node is stopping; open the stream again, on another node.";

  private volatile boolean draining;

  public void begin() {
    draining = true;
  }

  public boolean draining() {
    return draining;
  }

  /** The refusal of a new request; {@code id} null when the body was not read. */
  public static Refusal refusal(Object id) {
    return Refusal.rpc(503, error(id, REFUSED_MESSAGE))
        .with("Retry-After", String.valueOf(RETRY_AFTER_SECONDS))
        // the next connection may reach another gateway through the load balancer
        .with("Connection", "close");
  }

  /** A draining node's JSON-RPC error: code {@link JsonRpc#NODE_DRAINING}, with the wait in {@code data}. */
  public static JsonObject error(Object id, String message) {
    return JsonRpc.error(id, JsonRpc.NODE_DRAINING, message, new JsonObject().put("retryAfterSeconds", RETRY_AFTER_SECONDS));
  }
}
