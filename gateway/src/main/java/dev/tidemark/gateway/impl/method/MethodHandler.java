package dev.tidemark.gateway.impl.method;

import dev.tidemark.gateway.impl.call.Call;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/** What one MCP method answers; it may throw or fail with an {@code RpcFailure} to answer with a JSON-RPC error. */
@FunctionalInterface
public interface MethodHandler {
  Future<JsonObject> handle(Call call);
}
