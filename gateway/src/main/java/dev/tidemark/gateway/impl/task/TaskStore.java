package dev.tidemark.gateway.impl.task;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.service.ServiceClient;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.function.UnaryOperator;

/**
 * Tasks in PostgreSQL ({@code tidemark.task} of the call's database), read and written by the
 * command role for whichever gateway asks ({@link Actions#TASK_STORE}), so that any gateway instance
 * of any node answers for any task and a task outlives the node that started it. Each row is the
 * task's JSON text: a change is written only over the exact text it was made from, so two gateways
 * that change one task at once (an outcome and a cancellation) never both win. Every operation names
 * the call's caller, and a row of another caller is as absent as none.
 *
 * <p>A task expires {@code ttl_ms} after its creation: a read past that finds nothing, whatever the
 * table still holds, and the command role deletes such rows.
 */
final class TaskStore {

  /** Tries of one change that keeps losing to other writers: more than the writers one task ever has. */
  private static final int MAX_TRIES = 16;

  private final ServiceClient services;

  TaskStore(ServiceClient services) {
    this.services = services;
  }

  private Future<JsonObject> ask(Call call, JsonObject arguments) {
    ToolDescriptor route = ToolCatalog.find(ToolCatalog.EXECUTE).orElseThrow();
    return services.send(route, ServiceClient.request(call, Actions.TASK_STORE, arguments)).compose(reply -> reply.isError()
        ? Future.failedFuture(new IllegalStateException("the task store answered " + reply.error().getString("code") + ": "
            + reply.error().getString("message")))
        : Future.succeededFuture(reply.structured()));
  }

  private static JsonObject op(String op, String id) {
    return new JsonObject().put("op", op).put("id", id);
  }

  /** Stores a new task of {@code call}'s caller; completes once a read on any gateway finds it. */
  Future<Void> create(Call call, Task task) {
    return ask(call, op("create", task.id()).put("state", task.encode()).put("expires_at_ms", task.expiresAt()))
        .compose(out -> out.getBoolean("written", false) ? Future.<Void>succeededFuture()
            : Future.failedFuture(new IllegalStateException("task id " + task.id() + " taken")));
  }

  /** {@code call}'s caller's task, or null when there is none or it expired. */
  Future<Task> find(Call call, String id) {
    return ask(call, op("get", id)).map(out -> {
      String text = out.getString("state");
      Task task = text == null ? null : Task.parse(text);
      return task == null || System.currentTimeMillis() >= task.expiresAt() ? null : task;
    });
  }

  /**
   * Applies {@code change} to the task as it is now, and writes the result over it unless another
   * writer changed it first, in which case the change is made again on what that writer left.
   * {@code change} answers null to leave the task as it is (a cancellation of a finished task, an
   * outcome of a cancelled one). Completes with the task as it then is; null when there is none.
   */
  Future<Task> update(Call call, String id, UnaryOperator<Task> change) {
    return update(call, id, change, 0);
  }

  private Future<Task> update(Call call, String id, UnaryOperator<Task> change, int tries) {
    return ask(call, op("get", id)).compose(out -> {
      String text = out.getString("state");
      if (text == null) {
        return Future.succeededFuture(null);
      }
      Task now = Task.parse(text);
      Task next = System.currentTimeMillis() >= now.expiresAt() ? null : change.apply(now);
      if (next == null) {
        return Future.succeededFuture(now);
      }
      return ask(call, op("replace", id).put("old", text).put("state", next.encode())).compose(written -> {
        if (written.getBoolean("written", false)) {
          return Future.succeededFuture(next);
        }
        return tries + 1 < MAX_TRIES ? update(call, id, change, tries + 1)
            : Future.failedFuture(new IllegalStateException("task " + id + " kept changing under " + MAX_TRIES + " tries"));
      });
    });
  }

  Future<Void> remove(Call call, String id) {
    return ask(call, op("remove", id)).mapEmpty();
  }
}
