package dev.tidemark.gateway.impl.jsonrpc;

import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * One JSON-RPC 2.0 message as the transport reads it, before any era looks at it: a request or
 * notification ({@code method} set), or a client's response to a server request ({@code method}
 * null). {@link #parse} refuses everything JSON-RPC forbids, and what MCP adds (no batches,
 * {@code params} and {@code params._meta} objects), with the status and code http.md gives.
 */
public record Envelope(Object id, boolean hasId, String method, JsonObject params, JsonObject meta, JsonObject message) {

  public boolean isResponse() {
    return method == null;
  }

  /** Throws a {@link Refusal} for a body that is not one well-formed message. */
  public static Envelope parse(Buffer body) {
    Object parsed;
    try {
      parsed = body.length() == 0 ? null : Json.decodeValue(body);
    } catch (DecodeException e) {
      throw Refusal.rpc(400, JsonRpc.error(null, JsonRpc.PARSE_ERROR, "The body is not valid JSON."));
    }
    if (parsed instanceof JsonArray) {
      throw Refusal.rpc(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "JSON-RPC batches are not supported: send one message per POST."));
    }
    if (!(parsed instanceof JsonObject msg)) {
      throw Refusal.rpc(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "The body must be one JSON-RPC message (a JSON object)."));
    }
    Object id = msg.getValue("id");
    boolean hasId = msg.containsKey("id");
    if (hasId && !validId(id)) {
      throw Refusal.rpc(400, JsonRpc.error(null, JsonRpc.INVALID_REQUEST, "The id must be a string or an integer."));
    }
    if (!"2.0".equals(msg.getValue("jsonrpc"))) {
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The message must carry \"jsonrpc\": \"2.0\"."));
    }
    Object method = msg.getValue("method");
    if (method == null) {
      if (hasId && (msg.containsKey("result") || msg.containsKey("error"))) {
        return new Envelope(id, true, null, new JsonObject(), new JsonObject(), msg);
      }
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The message has no method."));
    }
    if (!(method instanceof String name)) {
      throw Refusal.rpc(400, JsonRpc.error(id, JsonRpc.INVALID_REQUEST, "The method must be a string."));
    }
    // a notification gets no response, so what is wrong with its params refuses it at the HTTP layer
    int paramsStatus = hasId ? 200 : 400;
    Object params = msg.getValue("params");
    if (params != null && !(params instanceof JsonObject)) {
      throw Refusal.rpc(paramsStatus, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "The params must be an object."));
    }
    JsonObject p = params == null ? new JsonObject() : (JsonObject) params;
    Object meta = p.getValue("_meta");
    if (meta != null && !(meta instanceof JsonObject)) {
      throw Refusal.rpc(paramsStatus, JsonRpc.error(id, JsonRpc.INVALID_PARAMS, "params._meta must be an object."));
    }
    return new Envelope(id, hasId, name, p, meta == null ? new JsonObject() : (JsonObject) meta, msg);
  }

  static boolean validId(Object id) {
    return id instanceof String || id instanceof Integer || id instanceof Long
        || (id instanceof Number n && !(id instanceof Double || id instanceof Float) && n.longValue() == n.doubleValue());
  }
}
