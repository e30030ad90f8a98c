package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.tidemark.command.Proposals;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.database.Pools;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An agent's client that declared the tasks extension, and a person who decides on proposals with the class the CLI uses. */
final class TaskCalls {

  static final JsonObject CAPABILITIES = new JsonObject().put("extensions", new JsonObject().put("io.modelcontextprotocol/tasks", new JsonObject()));
  private static final Pattern PROPOSAL = Pattern.compile("prop_[0-9a-f]+");

  private TaskCalls() {}

  /** A 2025-11-25 session as {@code token}'s caller that declared the tasks extension at initialize. */
  static McpHttpClient connect(String url, String token) {
    McpHttpClient c = new McpHttpClient(url, token);
    c.initialize(CAPABILITIES);
    return c;
  }

  /** A tools/call that must answer with a task: its CreateTaskResult. */
  static JsonObject created(McpHttpClient c, String tool, JsonObject arguments) {
    JsonObject result = c.callTool(tool, arguments);
    assertEquals("task", result.getString("resultType"), () -> tool + " answered with no task: " + result.encode());
    assertNotNull(result.getString("taskId"), result::encode);
    return result;
  }

  /** tasks/get: the task, or an AssertionError with the JSON-RPC error. */
  static JsonObject get(McpHttpClient c, String taskId) {
    JsonObject response = c.rpc("tasks/get", new JsonObject().put("taskId", taskId));
    if (response.containsKey("error")) {
      throw new AssertionError("tasks/get failed: " + response.encode());
    }
    return response.getJsonObject("result");
  }

  /** The JSON-RPC error {@code method} (a tasks/ method) answers for {@code taskId}. */
  static JsonObject refusal(McpHttpClient c, String method, String taskId) {
    JsonObject response = c.rpc(method, new JsonObject().put("taskId", taskId).put("inputResponses", new JsonObject()));
    assertNotNull(response.getJsonObject("error"), () -> method + " was not refused: " + response.encode());
    return response.getJsonObject("error");
  }

  /** Polls tasks/get until the task has {@code status}; its last answer. */
  static JsonObject awaitStatus(McpHttpClient c, String taskId, String status, Duration timeout) {
    JsonObject[] last = {null};
    if (!Await.until(() -> status.equals((last[0] = get(c, taskId)).getString("status")), timeout)) {
      throw new AssertionError("task " + taskId + " is not " + status + " after " + timeout + "; tasks/get answers " + last[0]);
    }
    return last[0];
  }

  /** The proposal a task follows, as its status message names it. */
  static String proposalOf(JsonObject task) {
    Matcher m = PROPOSAL.matcher(task.getString("statusMessage", ""));
    assertEquals(true, m.find(), task::encode);
    return m.group();
  }

  /** Whether a statement whose text holds {@code marker} runs in database {@code db}. */
  static boolean running(SharedInfra infra, String db, String marker) {
    try (Connection c = TestDatabases.jdbc(infra, db); ResultSet rs = c.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%" + marker + "%' AND pid <> pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1) > 0;
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What a person does with {@link Proposals}, as the CLI does, with Tidemark's login to the database of {@code settings}. */
  static JsonObject decide(Map<ConfigKey, String> settings, Function<Proposals, Future<JsonObject>> decision) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      TidemarkConfig config = TidemarkConfig.from(settings);
      return decision.apply(new Proposals(vertx, config, Pools.create(vertx, config.database())))
          .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
