package dev.tidemark.gateway.impl.task;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.TidemarkConfig.TasksConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A task's wire forms and how its state moves, without a cluster. */
class TaskTest {

  private static Call call(String caller, String database, JsonObject params, JsonObject capabilities) {
    return new Call(true, new Caller(caller, caller, "reader", Access.READ_ONLY, List.of("*")), database, null, null, 1, "tools/call", params,
        null, "2026-07-28", capabilities, null, null, null, new Cancellation(), 0, null);
  }

  private static final JsonObject TASKS = new JsonObject().put("extensions", new JsonObject().put(Tasks.EXTENSION, new JsonObject()));

  private static JsonObject text(String text) {
    return new JsonObject().put("content", new JsonArray().add(new JsonObject().put("type", "text").put("text", text)));
  }

  @Test
  void theCreateTaskResultIsFlatWithIntegerMillisecondsAndNothingInlined() {
    Task task = Task.call(Tasks.newId(), call("c", "main", new JsonObject(), TASKS), "query", "node-1", "req-1", 0, 60_000, 1000);
    JsonObject created = task.created("goes on");
    assertEquals("task", created.getString("resultType"));
    assertEquals(Set.of("resultType", "taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs", "statusMessage"),
        created.fieldNames());
    assertEquals("working", created.getString("status"));
    assertEquals(60_000L, created.getLong("ttlMs"));
    assertTrue(created.getString("createdAt").matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z"), created::encode);
  }

  @Test
  void aTerminalTaskInlinesItsResultOrErrorAndNothingElse() {
    Task working = Task.call(Tasks.newId(), call("c", "main", new JsonObject(), TASKS), "query", null, null, 0, 60_000, 1000);
    JsonObject done = working.completed(text("ok"), null).detailed(null);
    assertEquals("complete", done.getString("resultType"));
    assertEquals("completed", done.getString("status"));
    assertEquals("complete", done.getJsonObject("result").getString("resultType"));
    assertFalse(done.containsKey("error") || done.containsKey("inputRequests") || done.containsKey("requestState"), done::encode);
    JsonObject failed = working.failed(new JsonObject().put("code", -32603).put("message", "lost"), "lost").detailed(null);
    assertEquals(-32603, failed.getJsonObject("error").getInteger("code"));
    assertFalse(failed.containsKey("result"), failed::encode);
    assertEquals("lost", failed.getString("statusMessage"));
  }

  @Test
  void aTaskAsksUntilEveryQuestionIsAnsweredThenWorksAgain() {
    Task asking = Task.call(Tasks.newId(), call("c", "main", new JsonObject(), TASKS), "multi_input", null, null, 0, 60_000, 1000)
        .asking("a", new JsonObject().put("method", "elicitation/create")).asking("b", new JsonObject().put("method", "elicitation/create"));
    assertEquals(Set.of("a", "b"), asking.detailed(null).getJsonObject("inputRequests").fieldNames());
    Task half = asking.answered(Set.of("a"));
    assertEquals("input_required", half.status());
    assertEquals(Set.of("b"), half.detailed(null).getJsonObject("inputRequests").fieldNames());
    Task all = half.answered(Set.of("b"));
    assertEquals("working", all.status());
    assertFalse(all.detailed(null).containsKey("inputRequests"));
  }

  @Test
  void onlyItsOwnCallerOnItsOwnDatabaseSeesATaskAndOnlyUntilItExpires() {
    Task task = Task.proposal(Tasks.newId(), call("alice", "main", new JsonObject(), TASKS), "update_rows", "prop_1", 60_000, 5000);
    long now = System.currentTimeMillis();
    assertTrue(task.visibleTo(call("alice", "main", new JsonObject(), TASKS), now));
    assertFalse(task.visibleTo(call("bob", "main", new JsonObject(), TASKS), now));
    assertFalse(task.visibleTo(call("alice", "other", new JsonObject(), TASKS), now));
    assertFalse(task.visibleTo(call("alice", "main", new JsonObject(), TASKS), now + 60_001));
  }

  @Test
  void aTtlTheCallAsksForIsHonouredUpToTheMaximum() {
    Tasks tasks = new Tasks(null, new TasksConfig(3_600_000, 86_400_000, 1000, 1000), 4, null, null);
    assertEquals(3_600_000, tasks.ttl(call("c", "main", new JsonObject(), TASKS), false));
    assertEquals(86_400_000, tasks.ttl(call("c", "main", new JsonObject(), TASKS), true), "a person decides in their own time");
    assertEquals(5_000, tasks.ttl(call("c", "main", new JsonObject().put("task", new JsonObject().put("ttl", 5_000)), TASKS), false));
    assertEquals(86_400_000, tasks.ttl(call("c", "main", new JsonObject().put("task", new JsonObject().put("ttlMs", 1e12)), TASKS), false));
  }

  @Test
  void theExtensionIsDeclaredInTheCapabilitiesOrInTheRequestsOwnMeta() {
    assertTrue(Tasks.declared(call("c", "main", new JsonObject(), TASKS)));
    assertFalse(Tasks.declared(call("c", "main", new JsonObject(), new JsonObject())));
    JsonObject perRequest = new JsonObject().put("_meta", new JsonObject().put("io.modelcontextprotocol/clientCapabilities", TASKS));
    assertTrue(Tasks.declared(call("c", "main", perRequest, new JsonObject())));
    assertFalse(Tasks.declared(call("c", "main", new JsonObject(), null)));
  }

  @Test
  void onlyAResultThatSaysProposedNamesAProposal() {
    JsonObject proposed = text("proposed").put("structuredContent", new JsonObject().put("mode", "proposed").put("proposal_id", "prop_9"));
    assertEquals("prop_9", Tasks.proposalOf(proposed));
    assertNull(Tasks.proposalOf(text("x").put("structuredContent", new JsonObject().put("mode", "commit"))));
    assertNull(Tasks.proposalOf(proposed.copy().put("isError", true)));
  }
}
