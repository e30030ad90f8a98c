package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.McpVersions;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Which handler answers each method, per era. Most methods mean the same on both; some belong to
 * one era only, and a 2026-07-28 request for a 2025-11-25 method is told so (with 404, as that
 * revision asks for an unknown method) rather than treated as unknown.
 */
public final class MethodTable {

  private final Map<String, MethodHandler> legacy = new LinkedHashMap<>();
  private final Map<String, MethodHandler> modern = new LinkedHashMap<>();
  private Function<Call, RpcFailure> modernCheck = call -> null;

  /** A method both eras serve. */
  public MethodTable both(String method, MethodHandler handler) {
    legacy.put(method, handler);
    modern.put(method, handler);
    return this;
  }

  /** A method only 2025-11-25 (and older) serves. */
  public MethodTable legacyOnly(String method, MethodHandler handler) {
    legacy.put(method, handler);
    return this;
  }

  /** A method only 2026-07-28 serves. */
  public MethodTable modernOnly(String method, MethodHandler handler) {
    modern.put(method, handler);
    return this;
  }

  /** A check every 2026-07-28 call passes before any handler runs; a failure it returns is the answer. */
  public MethodTable checkingModern(Function<Call, RpcFailure> check) {
    this.modernCheck = check;
    return this;
  }

  /** Whether a handler answers {@code call}'s method in its era: only such a method may name a span. */
  public boolean serves(Call call) {
    return (call.modern() ? modern : legacy).containsKey(call.method());
  }

  public Future<JsonObject> dispatch(Call call) {
    if (call.modern()) {
      RpcFailure refused = modernCheck.apply(call);
      if (refused != null) {
        return Future.failedFuture(refused);
      }
    }
    String method = call.method();
    MethodHandler handler = (call.modern() ? modern : legacy).get(method);
    if (handler != null) {
      try {
        return handler.handle(call);
      } catch (RpcFailure f) {
        return Future.failedFuture(f);
      }
    }
    if (call.modern() && (legacy.containsKey(method) || McpMethods.INITIALIZE.equals(method))) {
      return Future.failedFuture(new RpcFailure(JsonRpc.METHOD_NOT_FOUND,
          method + " belongs to the 2025-11-25 era; this request speaks " + call.protocolVersion() + ".", 404, null));
    }
    return Future.failedFuture(new RpcFailure(JsonRpc.METHOD_NOT_FOUND,
        "Method not found; this server speaks MCP " + String.join(", ", McpVersions.ALL) + ".", call.modern() ? 404 : 200, null));
  }

  /** On 2026-07-28 a list or read result says how long it may be cached, and by whom; older revisions have no such fields. */
  public static JsonObject cacheable(Call call, JsonObject result, long ttlMs, String scope) {
    return call.modern() ? result.put("ttlMs", ttlMs).put("cacheScope", scope) : result;
  }
}
