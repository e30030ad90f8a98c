package dev.tidemark.gateway.impl.task;

import dev.tidemark.contract.Addresses;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tasks in the cluster map {@link Addresses#TASKS_MAP} (Hazelcast, with a backup on another member),
 * so that any gateway answers for any task and a task outlives the gateway that started it. Each
 * entry is the task's JSON text: a change is written only over the exact text it was made from, so
 * two gateways that change one task at once (an outcome and a cancellation) never both win.
 *
 * <p>A task expires {@code ttl_ms} after its creation, whatever the map holds: a read past that
 * finds nothing. The map forgets an entry at that time too, as long as the entry was only ever
 * created and finished; Hazelcast's compare-and-set ({@code replace}) drops an entry's time to live,
 * so the final write puts it back, and {@link #sweep} removes what expired without one (a task
 * whose gateway died while it waited for its client).
 */
final class TaskStore {

  private static final Logger LOG = LoggerFactory.getLogger(TaskStore.class);

  /** The map key under which one gateway at a time claims the sweep. */
  static final String SWEEP_CLAIM = "sweep";
  /** How often a gateway tries to claim the sweep: the most an expired, unfinished entry outlives its expiry by. */
  static final long SWEEP_MILLIS = 10 * 60 * 1000L;
  /** Tries of one change that keeps losing to other writers: more than the writers one task ever has. */
  private static final int MAX_TRIES = 16;

  private final Vertx vertx;

  TaskStore(Vertx vertx) {
    this.vertx = vertx;
  }

  private Future<AsyncMap<String, String>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.TASKS_MAP);
  }

  /** Stores a new task; completes once a read on any gateway finds it. */
  Future<Void> create(Task task) {
    long ttl = Math.max(1, task.expiresAt() - System.currentTimeMillis());
    return map().compose(m -> m.putIfAbsent(task.id(), task.encode(), ttl)).compose(previous -> previous == null
        ? Future.succeededFuture() : Future.failedFuture(new IllegalStateException("task id " + task.id() + " taken")));
  }

  /** The task, or null when there is none or it expired. */
  Future<Task> find(String id) {
    if (SWEEP_CLAIM.equals(id)) {
      return Future.succeededFuture(null);
    }
    return map().compose(m -> m.get(id)).map(text -> {
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
  Future<Task> update(String id, UnaryOperator<Task> change) {
    return map().compose(m -> update(m, id, change, 0));
  }

  private Future<Task> update(AsyncMap<String, String> m, String id, UnaryOperator<Task> change, int tries) {
    return m.get(id).compose(text -> {
      if (text == null) {
        return Future.succeededFuture(null);
      }
      Task now = Task.parse(text);
      Task next = System.currentTimeMillis() >= now.expiresAt() ? null : change.apply(now);
      if (next == null) {
        return Future.succeededFuture(now);
      }
      return m.replaceIfPresent(id, text, next.encode()).compose(written -> {
        if (!written) {
          return tries + 1 < MAX_TRIES ? update(m, id, change, tries + 1)
              : Future.failedFuture(new IllegalStateException("task " + id + " kept changing under " + MAX_TRIES + " tries"));
        }
        if (!next.terminal()) {
          return Future.succeededFuture(next);
        }
        // final: no change follows, so putting the same text back races with nothing, and restores the time to live
        long ttl = next.expiresAt() - System.currentTimeMillis();
        return (ttl > 0 ? m.put(id, next.encode(), ttl) : m.remove(id).<Void>mapEmpty()).map(next);
      });
    });
  }

  Future<Void> remove(String id) {
    return map().compose(m -> m.remove(id)).mapEmpty();
  }

  /**
   * Removes the entries that expired, when this gateway is the one that claimed the sweep of this
   * period (one per cluster): a read already finds none of them, so this only frees the memory.
   */
  void sweep(String claimant) {
    map().compose(m -> m.putIfAbsent(SWEEP_CLAIM, claimant, SWEEP_MILLIS - 1000).compose(previous -> {
      if (previous != null) {
        return Future.succeededFuture(0);
      }
      long now = System.currentTimeMillis();
      return m.entries().compose(entries -> {
        int removed = 0;
        for (Map.Entry<String, String> e : entries.entrySet()) {
          if (!SWEEP_CLAIM.equals(e.getKey()) && now >= Task.parse(e.getValue()).expiresAt()) {
            m.removeIfPresent(e.getKey(), e.getValue());
            removed++;
          }
        }
        return Future.succeededFuture(removed);
      });
    })).onSuccess(removed -> {
      if (removed > 0) {
        LOG.info("removed {} expired tasks from the cluster map", removed);
      }
    }).onFailure(err -> LOG.info("the sweep of expired tasks did not run ({}); the next one will", err.toString()));
  }
}
