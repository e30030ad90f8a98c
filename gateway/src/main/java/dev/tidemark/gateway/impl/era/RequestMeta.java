package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;

/**
 * What every 2026-07-28 request must carry beyond its headers: {@code params._meta} with the
 * protocol version and the client's capabilities (clientInfo is only a SHOULD, so it is never
 * required), well-formed {@code inputResponses} and {@code requestState} when it retries, and, for
 * a {@code tools/call}, {@code Mcp-Param-*} headers that match its arguments. Each refusal is a
 * value the endpoint writes; none is a side effect.
 */
public final class RequestMeta {

  private static final String VERSION = Meta.VERSION;
  private static final String CAPABILITIES = Meta.CAPABILITIES;

  private RequestMeta() {}

  /**
   * The refusal of a request that names no protocol version in {@code _meta}, checked before the
   * headers are compared with it: 400 with -32602, as the revision asks of a request missing a
   * required {@code _meta} field.
   */
  static RpcFailure versionFault(JsonObject params) {
    if (!(params.getValue("_meta") instanceof JsonObject meta)) {
      return new RpcFailure(JsonRpc.INVALID_PARAMS, "params._meta is missing: every 2026-07-28 request carries _meta with "
          + VERSION + " and " + CAPABILITIES + ".", 400, null);
    }
    if (!(meta.getValue(VERSION) instanceof String)) {
      return new RpcFailure(JsonRpc.INVALID_PARAMS, "params._meta." + VERSION + " is missing: name the protocol version"
          + " (2026-07-28) in _meta as well as in MCP-Protocol-Version.", 400, null);
    }
    return null;
  }

  /**
   * The refusal of a request whose version and standard headers checked out but whose other
   * parts do not: no client capabilities (400, -32602), malformed retry fields (-32602), or
   * {@code Mcp-Param-*} headers that do not match a tool's arguments (400, -32020).
   */
  static RpcFailure fault(String method, JsonObject params, MultiMap headers, ParamHeaders paramHeaders) {
    JsonObject meta = params.getJsonObject("_meta");
    if (!(meta.getValue(CAPABILITIES) instanceof JsonObject)) {
      return new RpcFailure(JsonRpc.INVALID_PARAMS, "params._meta." + CAPABILITIES + " is missing or not an object: declare"
          + " what the client can do ({} for nothing) on every request.", 400, null);
    }
    Object responses = params.getValue("inputResponses");
    if (responses != null && !(responses instanceof JsonObject)) {
      return new RpcFailure(JsonRpc.INVALID_PARAMS, "params.inputResponses must be an object: each key of the inputRequests"
          + " you answer, with the client's result for it.");
    }
    Object state = params.getValue("requestState");
    if (state != null && !(state instanceof String)) {
      return new RpcFailure(JsonRpc.INVALID_PARAMS, "params.requestState must be the string the input_required result gave;"
          + " send it back unchanged.");
    }
    if (McpMethods.TOOLS_CALL.equals(method) && params.getValue("name") instanceof String tool) {
      JsonObject arguments = params.getValue("arguments") instanceof JsonObject a ? a : new JsonObject();
      String mismatch = paramHeaders.mismatch(tool, arguments, headers);
      if (mismatch != null) {
        return new RpcFailure(JsonRpc.HEADER_MISMATCH, mismatch, 400, null);
      }
    }
    return null;
  }
}
