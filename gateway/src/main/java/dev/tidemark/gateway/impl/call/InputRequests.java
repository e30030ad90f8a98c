package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/**
 * What a 2026-07-28 call asks of its client, which this revision never asks by a server request:
 * each question is an entry of the {@code input_required} result, named by a key; the client
 * answers in {@code inputResponses} on its retry, and the answers used so far travel in the signed
 * {@code requestState}, so a call may take several rounds. A question needs the client capability
 * its method belongs to: asking a client that did not declare it is a MissingRequiredClientCapability
 * error (-32021, HTTP 400), never a question it cannot answer.
 */
public final class InputRequests {

  private final Call call;
  private final RequestStates states;
  private final JsonObject answers;
  /** The answers this round used, carried into the next round's state. */
  private final JsonObject used = new JsonObject();
  private final JsonObject pending = new JsonObject();
  private int unnamed;

  InputRequests(Call call, RequestStates states) {
    this.call = call;
    this.states = states;
    this.answers = states.answers(call);
  }

  static RpcFailure missingCapability(String capability) {
    return new RpcFailure(JsonRpc.MISSING_REQUIRED_CLIENT_CAPABILITY, "This request needs the client's " + capability
        + " capability, which _meta." + Meta.CAPABILITIES + " does not declare: declare it and answer the "
        + capability + " requests of the input_required result, or use another tool.", 400,
        new JsonObject().put("requiredCapabilities", new JsonObject().put(capability, new JsonObject())));
  }

  /** A key for a question its asker did not name. */
  String nextKey() {
    return "input-" + (unnamed++);
  }

  /**
   * The client's answer to question {@code key}; or a failed {@link InputRequired} once the
   * question is noted for the result; or a failed {@link RpcFailure} when the client lacks the
   * capability or answered with something that is not a result object.
   */
  Future<JsonObject> request(String key, String method, JsonObject params) {
    String capability = McpMethods.capability(method);
    if (!call.clientCan(capability)) {
      return Future.failedFuture(missingCapability(capability));
    }
    Object answer = answers.getValue(key);
    if (answer instanceof JsonObject a) {
      used.put(key, a);
      return Future.succeededFuture(a);
    }
    if (answer != null) {
      return Future.failedFuture(new RpcFailure(JsonRpc.INVALID_PARAMS, "params.inputResponses." + key
          + " must be an object: the client's result for " + method + "."));
    }
    pending.put(key, new JsonObject().put("method", method).put("params", params));
    return Future.failedFuture(new InputRequired());
  }

  /** Whether the request came back with a state this server issued (verified before it ran). */
  boolean resumed() {
    return call.params().getValue("requestState") instanceof String;
  }

  /** The {@code input_required} result that asks every question noted this round. */
  JsonObject result() {
    return new JsonObject().put("resultType", "input_required").put("inputRequests", pending.copy())
        .put("requestState", states.issue(call, used));
  }
}
