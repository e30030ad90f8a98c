package dev.tidemark.gateway.impl.jsonrpc;

import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.json.JsonObject;

/** Reading a request's params; what does not fit is -32602. */
public final class Params {

  private Params() {}

  public static String requireString(JsonObject params, String field) {
    Object value = params.getValue(field);
    if (!(value instanceof String s) || s.isEmpty()) {
      throw new RpcFailure(JsonRpc.INVALID_PARAMS, "params." + field + " must be a non-empty string.");
    }
    return s;
  }

  /** An optional object field: empty when absent, -32602 with {@code message} when it is something else. */
  public static JsonObject optionalObject(JsonObject params, String field, String message) {
    Object value = params.getValue(field);
    if (value != null && !(value instanceof JsonObject)) {
      throw new RpcFailure(JsonRpc.INVALID_PARAMS, message);
    }
    return value == null ? new JsonObject() : (JsonObject) value;
  }
}
