package dev.tidemark.gateway.impl.spec;

import io.vertx.core.json.JsonObject;

/** JSON-RPC 2.0 codes and message builders used by the MCP endpoint. */
public final class JsonRpc {

  public static final int PARSE_ERROR = -32700;
  public static final int INVALID_REQUEST = -32600;
  public static final int METHOD_NOT_FOUND = -32601;
  public static final int INVALID_PARAMS = -32602;
  public static final int INTERNAL_ERROR = -32603;
  /** 2025-11-25: a resource that does not exist (2026-07-28 uses -32602). */
  public static final int RESOURCE_NOT_FOUND = -32002;
  /** 2026-07-28: a header does not match the body, or a required header is missing. */
  public static final int HEADER_MISMATCH = -32020;
  /** 2026-07-28: the request needs a client capability its _meta does not declare; data names it. */
  public static final int MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
  /** 2026-07-28: the requested protocol version is not served; data lists the supported ones. */
  public static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;

  /**
   * Tidemark: the node is draining before it stops (HTTP 503 with {@code Retry-After}), or it
   * stopped before a call or stream ended; send the request again, and another node takes it.
   */
  public static final int NODE_DRAINING = -32010;
  /**
   * Tidemark: a request asked for more than a limit allows (a subscription past a session's or a
   * caller's most); {@code data} names the limit's config key and its value. Nothing was changed.
   */
  public static final int LIMIT_EXCEEDED = -32030;

  private JsonRpc() {}

  public static JsonObject result(Object id, JsonObject result) {
    return new JsonObject().put("jsonrpc", "2.0").put("id", id).put("result", result);
  }

  public static JsonObject error(Object id, int code, String message, JsonObject data) {
    JsonObject e = error(id, code, message);
    if (data != null) {
      e.getJsonObject("error").put("data", data);
    }
    return e;
  }

  /** {@code id} is null when the request's id could not be read, as JSON-RPC asks. */
  public static JsonObject error(Object id, int code, String message) {
    return new JsonObject()
        .put("jsonrpc", "2.0")
        .put("id", id)
        .put("error", new JsonObject().put("code", code).put("message", message));
  }
}
