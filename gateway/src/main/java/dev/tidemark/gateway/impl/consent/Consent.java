package dev.tidemark.gateway.impl.consent;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.Service;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.CallContext;
import dev.tidemark.gateway.impl.call.InputRequired;
import dev.tidemark.gateway.impl.call.ServerRequests;
import dev.tidemark.gateway.impl.service.ServiceClient;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.function.Function;

/**
 * The user's consent to a change that removes data. The command service refuses such a commit
 * with {@code DECISION_REQUIRED} unless it carries {@code confirm}; the gateway then asks the user,
 * when the client can be asked, and commits with {@code confirm} only on a clear yes. No
 * transaction is open while the user decides.
 */
public final class Consent {

  /** The field of the elicited form, and the key of the 2026-07-28 input request. */
  static final String KEY = "confirm";

  private final ServiceClient services;
  private final ServerRequests serverRequests;

  public Consent(ServiceClient services, ServerRequests serverRequests) {
    this.services = services;
    this.serverRequests = serverRequests;
  }

  /** A commit the user has to allow: the command service said so, and the call did not carry confirm. */
  public static boolean needed(ToolDescriptor tool, JsonObject arguments, ToolReply reply) {
    return tool.service() == Service.COMMAND && reply.isError()
        && ErrorCode.DECISION_REQUIRED.code().equals(reply.error().getString("code"))
        && !Boolean.TRUE.equals(arguments.getValue("confirm"));
  }

  /**
   * Asks the user whether the removal may go ahead: an elicitation on the call's stream on
   * 2025-11-25, an input_required result on 2026-07-28. Without a way to ask, the refusal stands.
   */
  public Future<JsonObject> ask(Call call, ToolDescriptor tool, JsonObject arguments, ToolReply refused, CallContext context,
      Function<ToolReply, JsonObject> render) {
    return ask(call, tool, arguments, refused, context, render, args -> ServiceClient.request(call, tool.name(), args));
  }

  /** As above; {@code requests} makes the request that commits with the user's yes (a named tool's carries its definition). */
  public Future<JsonObject> ask(Call call, ToolDescriptor tool, JsonObject arguments, ToolReply refused, CallContext context,
      Function<ToolReply, JsonObject> render, Function<JsonObject, dev.tidemark.contract.ToolRequest> requests) {
    if (!call.clientCan("elicitation")) {
      return Future.succeededFuture(render.apply(refused));
    }
    Future<JsonObject> answer;
    if (call.modern()) {
      answer = context.request(KEY, McpMethods.ELICITATION_CREATE, request(refused));
      if (answer.failed() && answer.cause() instanceof InputRequired) {
        return Future.succeededFuture(context.inputRequired());
      }
    } else {
      answer = serverRequests.send(call.channel(), McpMethods.ELICITATION_CREATE, request(refused), ServerRequests.CLIENT_REQUEST_TIMEOUT_MS)
          .otherwise(err -> null);
    }
    return answer.compose(a -> {
      if (!allowed(a)) {
        context.log("info", tool.name() + ": the user did not allow the change");
        return Future.succeededFuture(render.apply(ToolReply.failed(new ToolException(ErrorCode.DECISION_REQUIRED,
            "The user did not allow the change; nothing was written.", refused.error().copy().put("declined", true)))));
      }
      return services.send(tool, requests.apply(arguments.copy().put("confirm", true))).map(render);
    });
  }

  /** The elicitation: the service's question, and one boolean the user must set. */
  static JsonObject request(ToolReply refused) {
    String question = refused.error().getString("question", "Allow this change?");
    return new JsonObject().put("mode", "form").put("message", question)
        .put("requestedSchema", new JsonObject().put("type", "object")
            .put("properties", new JsonObject().put(KEY, new JsonObject().put("type", "boolean")
                .put("title", "Allow the change").put("description", "Removed rows cannot be restored by Tidemark.").put("default", false)))
            .put("required", new JsonArray().add(KEY)));
  }

  /** Only an accepted form with the box ticked is a yes; a decline, a cancel, silence or a failure is a no. */
  static boolean allowed(JsonObject answer) {
    return answer != null && "accept".equals(answer.getString("action"))
        && answer.getValue("content") instanceof JsonObject content && Boolean.TRUE.equals(content.getValue(KEY));
  }
}
