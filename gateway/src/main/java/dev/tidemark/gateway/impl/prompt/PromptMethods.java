package dev.tidemark.gateway.impl.prompt;

import dev.tidemark.gateway.McpExtension;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.CallContext;
import dev.tidemark.gateway.impl.call.InputRequired;
import dev.tidemark.gateway.impl.jsonrpc.Params;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.method.Extensions;
import dev.tidemark.gateway.impl.method.MethodTable;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.Function;

/** {@code prompts/list} and {@code prompts/get}: Tidemark's own prompts, then the extensions'. */
public final class PromptMethods {

  private final List<McpExtension> extensions;
  private final Function<Call, CallContext> contexts;

  public PromptMethods(List<McpExtension> extensions, Function<Call, CallContext> contexts) {
    this.extensions = List.copyOf(extensions);
    this.contexts = contexts;
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
    // an extension's prompt may ask the client while it is built, as a tool may
    CallContext context = contexts.apply(call);
    return Extensions.firstOf(extensions, e -> e.getPrompt(name, arguments, context))
        .recover(err -> err instanceof InputRequired ? Future.succeededFuture(context.inputRequired())
            : Future.failedFuture(err instanceof IllegalArgumentException ? new RpcFailure(JsonRpc.INVALID_PARAMS, err.getMessage() + ".") : err))
        .compose(result -> result == null
            ? Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "Unknown prompt; prompts/list shows what exists."))
            : Future.succeededFuture(result));
  }
}
