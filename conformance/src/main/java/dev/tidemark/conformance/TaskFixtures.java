package dev.tidemark.conformance;

import dev.tidemark.gateway.ExtensionContext;
import dev.tidemark.gateway.McpExtension;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The tools the Tasks-extension scenarios of the conformance suite ({@code tasks-*},
 * {@code io.modelcontextprotocol/tasks}) ask for. Each one only says what it does and whether it
 * goes on as a task ({@link ExtensionContext#asTask}); what the scenarios test is the gateway's:
 * the task's creation and its wire form, {@code tasks/get}, {@code tasks/update} and
 * {@code tasks/cancel}, the -32021 refusals, and a task that asks its client in
 * {@code inputRequests}. Test only, like {@link ConformanceFixtures}.
 */
public final class TaskFixtures implements McpExtension {

  private final Vertx vertx;

  public TaskFixtures(Vertx vertx) {
    this.vertx = vertx;
  }

  private static JsonObject tool(String name, String description, String taskSupport, JsonObject properties, String... required) {
    JsonObject schema = new JsonObject().put("type", "object").put("properties", properties).put("additionalProperties", false);
    if (required.length > 0) {
      schema.put("required", new JsonArray(List.of((Object[]) required)));
    }
    JsonObject tool = new JsonObject().put("name", name).put("description", description).put("inputSchema", schema);
    return taskSupport == null ? tool : tool.put("execution", new JsonObject().put("taskSupport", taskSupport));
  }

  private static JsonObject text(String text) {
    return new JsonObject().put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", text)));
  }

  private static JsonObject confirmForm(String message) {
    return new JsonObject().put("mode", "form").put("message", message).put("requestedSchema", new JsonObject().put("type", "object")
        .put("properties", new JsonObject().put("confirm", new JsonObject().put("type", "boolean"))).put("required", new JsonArray().add("confirm")));
  }

  private static JsonObject nameForm(String message) {
    return new JsonObject().put("mode", "form").put("message", message).put("requestedSchema", new JsonObject().put("type", "object")
        .put("properties", new JsonObject().put("name", new JsonObject().put("type", "string"))).put("required", new JsonArray().add("name")));
  }

  private static String field(JsonObject answer, String field) {
    return "accept".equals(answer.getString("action")) && answer.getValue("content") instanceof JsonObject c
        ? String.valueOf(c.getValue(field)) : "(" + answer.getString("action", "no answer") + ")";
  }

  @Override
  public List<JsonObject> tools() {
    JsonObject str = new JsonObject().put("type", "string");
    return List.of(
        tool("greet", "Greets by name, at once: never a task.", null, new JsonObject().put("name", str.copy()), "name"),
        tool("slow_compute", "Waits the given number of seconds, as a task, then says so; cancelled, it stops.", "optional",
            new JsonObject().put("seconds", new JsonObject().put("type", "number").put("minimum", 0).put("maximum", 600))
                .put("label", str.copy()), "seconds"),
        tool("failing_job", "A task that ends after about a second with a tool error.", "required", new JsonObject()),
        tool("protocol_error_job", "A task that fails with a protocol error.", "optional", new JsonObject()),
        tool("confirm_delete", "A task that asks the user to confirm deleting a file, then says what it did.", "optional",
            new JsonObject().put("filename", str.copy()), "filename"),
        tool("multi_input", "A task that asks the user two questions at once.", "optional", new JsonObject()),
        tool("test_tool_with_task", "Asks the user's name before it starts (input_required), then greets them as a task.", "required",
            new JsonObject()));
  }

  @Override
  public Future<JsonObject> callTool(String name, JsonObject arguments, ExtensionContext context) {
    return switch (name) {
      case "greet" -> Future.succeededFuture(text("Hello, " + arguments.getString("name") + "!"));
      case "slow_compute" -> context.asTask(task -> {
        long ms = (long) (arguments.getNumber("seconds").doubleValue() * 1000);
        String label = arguments.getString("label", "the computation");
        return sleep(task, ms).map(v -> text("Computed " + label + " in " + arguments.getNumber("seconds") + " s."));
      });
      case "failing_job" -> context.asTask(task -> sleep(task, 1000).map(v -> text("The job failed: it found nothing to do.")
          .put("isError", true)));
      case "protocol_error_job" -> context.asTask(task -> sleep(task, 200)
          .compose(v -> Future.failedFuture(new IllegalStateException("the job crashed"))));
      case "confirm_delete" -> context.asTask(task -> task.request("confirm", "elicitation/create",
              confirmForm("Delete " + arguments.getString("filename") + "?"))
          .map(answer -> text(Boolean.TRUE.toString().equals(field(answer, "confirm"))
              ? "Deleted " + arguments.getString("filename") + "." : "Kept " + arguments.getString("filename") + ".")));
      case "multi_input" -> context.asTask(task -> {
        Future<JsonObject> who = task.request("name", "elicitation/create", nameForm("What is your name?"));
        Future<JsonObject> sure = task.request("confirm", "elicitation/create", confirmForm("Go on?"));
        return Future.all(who, sure).map(all -> text("Thanks, " + field(who.result(), "name") + "; go on: "
            + field(sure.result(), "confirm") + "."));
      });
      // the question comes before the task exists (an input_required result), the greeting as the task
      case "test_tool_with_task" -> context.request("user_name", "elicitation/create", nameForm("What is your name?"))
          .compose(answer -> context.asTask(task -> Future.succeededFuture(text("Hello, " + field(answer, "name") + "!"))));
      default -> Future.failedFuture(new IllegalArgumentException("no fixture tool " + name));
    };
  }

  /** Completes after {@code ms}, or fails at once when the task is cancelled. */
  private Future<Void> sleep(ExtensionContext task, long ms) {
    if (ms <= 0) {
      return Future.succeededFuture();
    }
    Promise<Void> slept = Promise.promise();
    long timer = vertx.setTimer(ms, t -> slept.tryComplete());
    task.onCancel(() -> {
      vertx.cancelTimer(timer);
      slept.tryFail("cancelled");
    });
    return slept.future();
  }
}
