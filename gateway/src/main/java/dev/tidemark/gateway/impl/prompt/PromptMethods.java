package dev.tidemark.gateway.impl.prompt;

import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.jsonrpc.Params;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.method.Extensions;
import dev.tidemark.gateway.impl.method.MethodTable;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** {@code prompts/list} and {@code prompts/get}: Tidemark's own prompts, then the extensions'. */
public final class PromptMethods {

  private final List<McpExtension> extensions;

  public PromptMethods(List<McpExtension> extensions) {
    this.extensions = List.copyOf(extensions);
  }

  public Future<JsonObject> list(Call call) {
    JsonArray out = new JsonArray();
    Prompts.list().forEach(p -> out.add(p.copy()));
    extensions.forEach(e -> e.prompts().forEach(p -> out.add(p.copy())));
    return Future.succeededFuture(MethodTable.cacheable(call, new JsonObject().put("prompts", out), 60_000, "public"));
  }

  public Future<JsonObject> get(Call call) {
    String name = Params.requireString(call.params(), "name");
    JsonObject arguments = Params.optionalObject(call.params(), "arguments", "params.arguments must be an object of strings.");
    JsonObject own;
    try {
      own = Prompts.get(name, arguments);
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, e.getMessage() + "."));
    }
    if (own != null) {
      return Future.succeededFuture(own);
    }
    return Extensions.firstOf(extensions, e -> e.getPrompt(name, arguments))
        .recover(err -> Future.failedFuture(err instanceof IllegalArgumentException
            ? new RpcFailure(JsonRpc.INVALID_PARAMS, err.getMessage() + ".") : err))
        .compose(result -> result == null
            ? Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "Unknown prompt; prompts/list shows what exists."))
            : Future.succeededFuture(result));
  }
}
