package dev.tidemark.gateway.impl.jsonrpc;

import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.json.JsonObject;

/** A method's answer as a JSON-RPC error (and, on HTTP, a status: 200 unless the era asks for another). */
public final class RpcFailure extends RuntimeException {

  private final int code;
  private final int httpStatus;
  private final JsonObject data;

  public RpcFailure(int code, String message) {
    this(code, message, 200, null);
  }

  public RpcFailure(int code, String message, int httpStatus, JsonObject data) {
    super(message, null, false, false);
    this.code = code;
    this.httpStatus = httpStatus;
    this.data = data;
  }

  public int httpStatus() {
    return httpStatus;
  }

  public int code() {
    return code;
  }

  /** The error's {@code data}, or null. */
  public JsonObject data() {
    return data;
  }

  /** The response to request {@code id}. */
  public JsonObject toMessage(Object id) {
    return JsonRpc.error(id, code, getMessage(), data);
  }
}
