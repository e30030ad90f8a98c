package dev.tidemark.gateway.impl;

import io.vertx.core.json.JsonObject;

/** JSON-RPC 2.0 codes and message builders used by the MCP endpoint. */
public final class JsonRpc {

  public static final int PARSE_ERROR = -32700;
  public static final int INVALID_REQUEST = -32600;
  public static final int METHOD_NOT_FOUND = -32601;
  public static final int INVALID_PARAMS = -32602;
  public static final int INTERNAL_ERROR = -32603;

  private JsonRpc() {}

  public static JsonObject result(Object id, JsonObject result) {
    return new JsonObject().put("jsonrpc", "2.0").put("id", id).put("result", result);
  }

  /** {@code id} is null when the request's id could not be read, as JSON-RPC asks. */
  public static JsonObject error(Object id, int code, String message) {
    return new JsonObject()
        .put("jsonrpc", "2.0")
        .put("id", id)
        .put("error", new JsonObject().put("code", code).put("message", message));
  }
}
