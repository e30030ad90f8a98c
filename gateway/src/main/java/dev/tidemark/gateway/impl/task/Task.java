package dev.tidemark.gateway.impl.task;

import dev.tidemark.gateway.impl.call.Call;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.Set;

/**
 * One task of the {@code io.modelcontextprotocol/tasks} extension as {@code tidemark.task} keeps it ({@link TaskStore}): whose
 * it is, what it runs or follows, and where it stands. Immutable: each change is a new value, written
 * over the one it was made from ({@link TaskStore#update}), so that two gateways never both win.
 *
 * <p>A task is of one of two kinds. A {@link #CALL} task is a tool call that runs on in the gateway
 * that started it ({@code node}), which writes its outcome; a {@link #PROPOSAL} task follows a
 * change that became a proposal, and nothing runs for it: its state is the proposal's, in
 * PostgreSQL, read by whichever gateway is asked.
 */
final class Task {

  static final String WORKING = "working";
  static final String INPUT_REQUIRED = "input_required";
  static final String COMPLETED = "completed";
  static final String FAILED = "failed";
  static final String CANCELLED = "cancelled";
  private static final Set<String> TERMINAL = Set.of(COMPLETED, FAILED, CANCELLED);

  static final String CALL = "call";
  static final String PROPOSAL = "proposal";

  private final JsonObject json;

  private Task(JsonObject json) {
    this.json = json;
  }

  static Task parse(String text) {
    return new Task(new JsonObject(text));
  }

  String encode() {
    return json.encode();
  }

  /** A tool call that goes on as a task in this gateway ({@code node}); {@code requestId} names its statement, if it runs one. */
  static Task call(String id, Call call, String tool, String node, String requestId, long startedAt, long ttlMs, long pollMs) {
    long now = System.currentTimeMillis();
    JsonObject json = base(id, call, tool, CALL, now, ttlMs, pollMs).put("started_at", startedAt);
    if (node != null) {
      json.put("node", node);
    }
    if (requestId != null) {
      json.put("request_id", requestId);
    }
    return new Task(json);
  }

  /** A change that became proposal {@code proposalId}, followed until a person decides. */
  static Task proposal(String id, Call call, String tool, String proposalId, long ttlMs, long pollMs) {
    return new Task(base(id, call, tool, PROPOSAL, System.currentTimeMillis(), ttlMs, pollMs).put("proposal_id", proposalId));
  }

  private static JsonObject base(String id, Call call, String tool, String kind, long now, long ttlMs, long pollMs) {
    return new JsonObject().put("id", id).put("caller", call.caller().id()).put("database", call.database()).put("tool", tool)
        .put("kind", kind).put("status", WORKING).put("created_at", now).put("updated_at", now).put("ttl_ms", ttlMs)
        .put("poll_ms", pollMs);
  }

  String id() {
    return json.getString("id");
  }

  String tool() {
    return json.getString("tool");
  }

  String kind() {
    return json.getString("kind");
  }

  String status() {
    return json.getString("status");
  }

  /** The cluster node id of the gateway that runs a call task; null for a proposal's (or outside a cluster). */
  String node() {
    return json.getString("node");
  }

  String requestId() {
    return json.getString("request_id");
  }

  String proposalId() {
    return json.getString("proposal_id");
  }

  String database() {
    return json.getString("database");
  }

  long startedAt() {
    return json.getLong("started_at", json.getLong("created_at"));
  }

  long expiresAt() {
    return json.getLong("created_at") + json.getLong("ttl_ms");
  }

  boolean terminal() {
    return TERMINAL.contains(status());
  }

  /** Whether {@code call} may see this task: its own caller, on the same database, before it expired. */
  boolean visibleTo(Call call, long now) {
    return call.caller().id().equals(json.getString("caller")) && call.database().equals(database()) && now < expiresAt();
  }

  JsonObject inputRequests() {
    return json.getJsonObject("input_requests", new JsonObject());
  }

  private Task next(String status) {
    return new Task(json.copy().put("status", status).put("updated_at", System.currentTimeMillis()));
  }

  Task completed(JsonObject result, String message) {
    Task t = next(COMPLETED);
    t.json.remove("input_requests");
    t.json.put("result", result);
    return message == null ? t : t.withMessage(message);
  }

  Task failed(JsonObject error, String message) {
    Task t = next(FAILED);
    t.json.remove("input_requests");
    t.json.put("error", error);
    return t.withMessage(message);
  }

  Task cancelled(String message) {
    Task t = next(CANCELLED);
    t.json.remove("input_requests");
    return t.withMessage(message);
  }

  /** A call task whose change became proposal {@code proposalId}: nothing runs for it any more, and it is kept as a proposal's task is. */
  Task followingProposal(String proposalId, long ttlMs, long pollMs) {
    Task t = next(WORKING);
    t.json.put("kind", PROPOSAL).put("proposal_id", proposalId).put("ttl_ms", Math.max(ttlMs, t.json.getLong("ttl_ms")))
        .put("poll_ms", pollMs);
    t.json.remove("node");
    t.json.remove("status_message");
    return t;
  }

  /** The task asks its client {@code request} under {@code key}, beside what it asks already. */
  Task asking(String key, JsonObject request) {
    Task t = next(INPUT_REQUIRED);
    t.json.put("input_requests", inputRequests().copy().put(key, request));
    return t;
  }

  /** The client answered {@code keys}: they are asked no more, and the task works again once nothing is left to ask. */
  Task answered(Set<String> keys) {
    JsonObject left = inputRequests().copy();
    keys.forEach(left::remove);
    Task t = next(left.isEmpty() ? WORKING : INPUT_REQUIRED);
    if (left.isEmpty()) {
      t.json.remove("input_requests");
    } else {
      t.json.put("input_requests", left);
    }
    return t;
  }

  private Task withMessage(String message) {
    json.put("status_message", message);
    return this;
  }

  /**
   * The task as {@code tasks/get} answers it (a DetailedTask, with {@code resultType: "complete"}):
   * its result, error or input requests inlined by status, and {@code statusMessage}, the stored
   * one or else {@code liveMessage}.
   */
  JsonObject detailed(String liveMessage) {
    JsonObject out = envelope("complete");
    String message = json.getString("status_message", liveMessage);
    if (message != null) {
      out.put("statusMessage", message);
    }
    switch (status()) {
      case COMPLETED -> out.put("result", json.getJsonObject("result").copy().put("resultType", "complete"));
      case FAILED -> out.put("error", json.getJsonObject("error").copy());
      case INPUT_REQUIRED -> out.put("inputRequests", inputRequests().copy());
      default -> { }
    }
    return out;
  }

  /** The {@code CreateTaskResult} a tools/call answers with: the task's seed state, nothing inlined. */
  JsonObject created(String message) {
    JsonObject out = envelope("task");
    return message == null ? out : out.put("statusMessage", message);
  }

  private JsonObject envelope(String resultType) {
    return new JsonObject().put("resultType", resultType).put("taskId", id()).put("status", status())
        .put("createdAt", Instant.ofEpochMilli(json.getLong("created_at")).toString())
        .put("lastUpdatedAt", Instant.ofEpochMilli(json.getLong("updated_at")).toString())
        .put("ttlMs", json.getLong("ttl_ms")).put("pollIntervalMs", json.getLong("poll_ms"));
  }
}
