package dev.tidemark.conformance;

import dev.tidemark.gateway.ExtensionContext;
import dev.tidemark.gateway.McpExtension;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * The tools and the prompt the 2026-07-28 scenarios of the conformance suite ask for. Each one
 * only asks the gateway for what the scenario tests; the behaviour under test is the gateway's:
 * the {@code input_required} result, the signed {@code requestState} and its refusal when altered,
 * the -32021 refusal of a client without the capability a question needs, the silence of a call
 * without a log level, and the {@code Mcp-Param-*} checks of {@code x-mcp-header} parameters. Test
 * only, like {@link ConformanceFixtures}.
 */
public final class ModernFixtures implements McpExtension {

  private static JsonObject noArguments(String name, String description) {
    return new JsonObject().put("name", name).put("description", description)
        .put("inputSchema", new JsonObject().put("type", "object").put("properties", new JsonObject()).put("additionalProperties", false));
  }

  private static JsonObject text(String text) {
    return new JsonObject().put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", text)));
  }

  /** An {@code elicitation/create} form with one string or boolean field, required. */
  private static JsonObject form(String message, String field, String type) {
    return new JsonObject().put("message", message).put("requestedSchema", new JsonObject().put("type", "object")
        .put("properties", new JsonObject().put(field, new JsonObject().put("type", type)))
        .put("required", new JsonArray().add(field)));
  }

  private static JsonObject sampling(String prompt, int maxTokens) {
    return new JsonObject().put("messages", new JsonArray().add(new JsonObject().put("role", "user")
        .put("content", new JsonObject().put("type", "text").put("text", prompt)))).put("maxTokens", maxTokens);
  }

  /** What the user typed into field {@code field} of an accepted form, or how they ended it. */
  private static String field(JsonObject elicitResult, String field) {
    JsonObject content = elicitResult.getValue("content") instanceof JsonObject c ? c : new JsonObject();
    return "accept".equals(elicitResult.getString("action")) ? String.valueOf(content.getValue(field))
        : "(" + elicitResult.getString("action", "no answer") + ")";
  }

  private static String sampled(JsonObject createMessageResult) {
    return createMessageResult.getValue("content") instanceof JsonObject c && c.getValue("text") instanceof String t ? t : "(no text)";
  }

  private static String roots(JsonObject listRootsResult) {
    List<String> uris = new ArrayList<>();
    listRootsResult.getJsonArray("roots", new JsonArray()).forEach(r -> uris.add(r instanceof JsonObject o ? o.getString("uri") : "?"));
    return String.join(", ", uris);
  }

  @Override
  public List<JsonObject> tools() {
    JsonObject headerSchema = new JsonObject().put("type", "object").put("properties", new JsonObject()
            .put("region", new JsonObject().put("type", "string").put("description", "Where to run; mirrored in Mcp-Param-Region.")
                .put("x-mcp-header", "Region"))
            .put("priority", new JsonObject().put("type", "integer").put("description", "Mirrored in Mcp-Param-Priority.")
                .put("x-mcp-header", "Priority"))
            .put("dry_run", new JsonObject().put("type", "boolean").put("description", "Mirrored in Mcp-Param-DryRun.")
                .put("x-mcp-header", "DryRun"))
            .put("note", new JsonObject().put("type", "string").put("description", "Not mirrored.")))
        .put("required", new JsonArray().add("region")).put("additionalProperties", false);
    return List.of(
        new JsonObject().put("name", "test_header_params").put("description", "Echoes a region, priority and dry_run that clients"
            + " mirror into Mcp-Param-* headers (x-mcp-header); the gateway checks each header against the arguments.")
            .put("inputSchema", headerSchema),
        noArguments("test_input_required_result_elicitation", "Asks the user's name (input request user_name), then greets them."),
        noArguments("test_input_required_result_sampling", "Asks the client's model a question (input request capital_question)."),
        noArguments("test_input_required_result_list_roots", "Asks for the client's roots (input request client_roots)."),
        noArguments("test_input_required_result_request_state", "Asks for a confirmation; the retry must bring back the requestState."),
        noArguments("test_input_required_result_multiple_inputs", "Asks three questions at once: a name, a greeting, the roots."),
        noArguments("test_input_required_result_multi_round", "Asks a name, then a colour, in two rounds."),
        noArguments("test_input_required_result_tampered_state", "Asks for a confirmation; an altered requestState is refused."),
        noArguments("test_input_required_result_capabilities", "Asks only what the client declared it can answer."),
        noArguments("test_missing_capability", "Needs the client's sampling capability; without it the request is refused (-32021)."),
        noArguments("test_streaming_elicitation", "Reports progress, then asks the user, in an input_required result."),
        noArguments("test_logging_tool", "Logs three messages, which reach only a request that set a log level."));
  }

  @Override
  public Future<JsonObject> callTool(String name, JsonObject arguments, ExtensionContext context) {
    return switch (name) {
      case "test_header_params" -> Future.succeededFuture(text("Routed to " + arguments.getString("region")
          + ", priority " + arguments.getValue("priority", "none") + ", dry run " + arguments.getValue("dry_run", false) + "."));
      case "test_input_required_result_elicitation" ->
          context.request("user_name", "elicitation/create", form("What is your name?", "name", "string"))
              .map(answer -> text("Hello, " + field(answer, "name") + "!"));
      case "test_input_required_result_sampling" ->
          context.request("capital_question", "sampling/createMessage", sampling("What is the capital of France?", 100))
              .map(answer -> text("The model answered: " + sampled(answer)));
      case "test_input_required_result_list_roots" -> context.request("client_roots", "roots/list", new JsonObject())
          .map(answer -> text("The client's roots: " + roots(answer)));
      case "test_input_required_result_request_state", "test_input_required_result_tampered_state" ->
          context.request("confirm", "elicitation/create", form("Please confirm", "ok", "boolean"))
              .map(answer -> text((context.resumed() ? "state-ok: the gateway verified the requestState it issued. " : "")
                  + "Confirmed: " + field(answer, "ok")));
      case "test_input_required_result_multiple_inputs" -> {
        Future<JsonObject> user = context.request("user_name", "elicitation/create", form("What is your name?", "name", "string"));
        Future<JsonObject> greeting = context.request("greeting", "sampling/createMessage", sampling("Generate a greeting", 50));
        Future<JsonObject> roots = context.request("client_roots", "roots/list", new JsonObject());
        yield Future.all(user, greeting, roots).map(all -> text(sampled(greeting.result()) + " " + field(user.result(), "name")
            + "; roots: " + roots(roots.result())));
      }
      case "test_input_required_result_multi_round" ->
          context.request("step1", "elicitation/create", form("Step 1: What is your name?", "name", "string"))
              .compose(step1 -> context.request("step2", "elicitation/create", form("Step 2: What is your favorite color?", "color", "string"))
                  .map(step2 -> text(field(step1, "name") + " likes " + field(step2, "color") + ".")));
      case "test_input_required_result_capabilities" -> {
        List<Future<JsonObject>> asked = new ArrayList<>();
        if (context.clientSupports("elicitation")) {
          asked.add(context.request("user_name", "elicitation/create", form("What is your name?", "name", "string")));
        }
        if (context.clientSupports("sampling")) {
          asked.add(context.request("greeting", "sampling/createMessage", sampling("Generate a greeting", 50)));
        }
        if (context.clientSupports("roots")) {
          asked.add(context.request("client_roots", "roots/list", new JsonObject()));
        }
        yield Future.all(asked).map(all -> text(asked.isEmpty() ? "The client declared nothing to ask, so nothing was asked."
            : "Asked " + asked.size() + " questions the client can answer, and had every answer."));
      }
      case "test_missing_capability" ->
          context.request("summary", "sampling/createMessage", sampling("Summarize the weather in one line.", 50))
              .map(answer -> text("The model answered: " + sampled(answer)));
      case "test_streaming_elicitation" -> {
        context.progress(0, 1.0, "Waiting for the user");
        yield context.request("answer", "elicitation/create", form("Do you want to go on?", "go_on", "boolean"))
            .map(answer -> text("The user answered: " + field(answer, "go_on")));
      }
      case "test_logging_tool" -> {
        context.log("info", "Tool execution started");
        context.log("info", "Tool processing data");
        context.log("info", "Tool execution completed");
        yield Future.succeededFuture(text("Logged three messages, where the request's log level let them through."));
      }
      default -> Future.failedFuture(new IllegalArgumentException("no fixture tool " + name));
    };
  }

  @Override
  public List<JsonObject> prompts() {
    return List.of(new JsonObject().put("name", "test_input_required_result_prompt")
        .put("description", "A prompt that asks the user for its context (input request user_context) before it is built."));
  }

  @Override
  public Future<JsonObject> getPrompt(String name, JsonObject arguments, ExtensionContext context) {
    if (!"test_input_required_result_prompt".equals(name)) {
      return Future.succeededFuture(null);
    }
    return context.request("user_context", "elicitation/create", form("What context should the prompt use?", "context", "string"))
        .map(answer -> new JsonObject().put("messages", new JsonArray().add(new JsonObject().put("role", "user")
            .put("content", new JsonObject().put("type", "text").put("text", "Use this context: " + field(answer, "context"))))));
  }
}
