package dev.tidemark.gateway.impl.task;

import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.ExtensionContext;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * What an extension's tool may do once it runs as a task. Its call has answered, so nothing goes
 * to the client on a stream: a question waits in the task's {@code inputRequests} (status
 * {@code input_required}) until the client answers it with {@code tasks/update}, on any gateway,
 * which sends the answer here; log and progress messages have nowhere to go, as the extension says.
 */
final class TaskContext implements ExtensionContext {

  private final Vertx vertx;
  private final Call call;
  private final String taskId;
  private final TaskStore store;
  private final Function<String, Future<Void>> resourceUpdated;
  private final Map<String, Promise<JsonObject>> waiting = new ConcurrentHashMap<>();
  private Future<Void> listening;
  private MessageConsumer<JsonObject> answers;
  private int unnamed;

  TaskContext(Vertx vertx, Call call, String taskId, TaskStore store, Function<String, Future<Void>> resourceUpdated) {
    this.vertx = vertx;
    this.call = call;
    this.taskId = taskId;
    this.store = store;
    this.resourceUpdated = resourceUpdated;
    // a cancelled task's questions will never be answered: the work waiting on them ends
    call.cancellation().onCancel(() -> waiting.values().forEach(w -> w.tryFail("the task was cancelled")));
  }

  @Override
  public void log(String level, Object data) {
    // a task's client is not listening on a stream for it
  }

  @Override
  public void progress(double progress, Double total, String message) {
    // as above: tasks/get is how its client learns how far it got
  }

  @Override
  public Future<JsonObject> request(String method, JsonObject params) {
    return request("input-" + (unnamed++), method, params);
  }

  /** Asks the client under {@code key}: the task is {@code input_required} until the answer arrives. */
  @Override
  public Future<JsonObject> request(String key, String method, JsonObject params) {
    String capability = McpMethods.capability(method);
    if (!call.clientCan(capability)) {
      return Future.failedFuture(new RpcFailure(JsonRpc.MISSING_REQUIRED_CLIENT_CAPABILITY, "The task needs the client's " + capability
          + " capability, which the request that started it did not declare.", 200,
          new JsonObject().put("requiredCapabilities", new JsonObject().put(capability, new JsonObject()))));
    }
    Promise<JsonObject> answer = Promise.promise();
    waiting.put(key, answer);
    // listening before the question shows, so that no answer can come before the consumer
    listening().compose(v -> store.update(call, taskId, t -> t.terminal() ? null : t.asking(key,
            new JsonObject().put("method", method).put("params", params))))
        .onFailure(answer::tryFail);
    return answer.future();
  }

  private synchronized Future<Void> listening() {
    if (listening == null) {
      answers = vertx.eventBus().consumer(Addresses.taskInput(taskId), msg -> {
        JsonObject responses = msg.body().getJsonObject("responses", new JsonObject());
        responses.forEach(e -> {
          Promise<JsonObject> waiter = waiting.remove(e.getKey());
          if (waiter != null) {
            waiter.tryComplete(e.getValue() instanceof JsonObject o ? o : new JsonObject());
          }
        });
      });
      listening = answers.completion();
    }
    return listening;
  }

  @Override
  public boolean clientSupports(String capability) {
    return call.clientCan(capability);
  }

  @Override
  public boolean resumed() {
    return false;
  }

  @Override
  public Future<Void> resourceUpdated(String uri) {
    return resourceUpdated.apply(uri);
  }

  @Override
  public boolean clientSupportsTasks() {
    return true;
  }

  @Override
  public Future<JsonObject> asTask(Function<ExtensionContext, Future<JsonObject>> work) {
    return work.apply(this); // a task already
  }

  @Override
  public void onCancel(Runnable action) {
    call.cancellation().onCancel(action);
  }

  /** Stops listening for answers once the work ended. */
  Future<Void> close() {
    MessageConsumer<JsonObject> consumer;
    synchronized (this) {
      consumer = answers;
    }
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }
}
