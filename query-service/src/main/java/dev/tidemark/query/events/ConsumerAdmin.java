package dev.tidemark.query.events;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.query.events.impl.ConsumerStore;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;

/**
 * What an administrator does with the events consumers of one database, with Tidemark's own login
 * (no agent has it): list them, and delete one. A deletion marks the consumer; a node with the query
 * role removes it at its next sweep (events.consumer-sweep-seconds), as it removes an idle one: its
 * share consumers on every node close first, then its share group and dead-letter topic go, then
 * its row and dead letters. So the nodes that serve it, not this program, touch the broker.
 */
public final class ConsumerAdmin {

  private static final long POLL_MS = 500;

  private final Vertx vertx;
  private final ConsumerStore store;

  public ConsumerAdmin(Vertx vertx, Pool pool, String database) {
    this.vertx = vertx;
    this.store = new ConsumerStore(pool, database);
  }

  /** Every consumer, least recently used first, with its owner, role, tables, use, share group, dead-letter topic and removal. */
  public Future<JsonArray> list() {
    return store.list();
  }

  /**
   * Marks the consumer of share group {@code group} for removal and waits up to {@code waitMs} for
   * a node to remove it: true once it is gone, false when it is still there (it goes at a later
   * sweep). NOT_FOUND when there is no such consumer.
   */
  public Future<Boolean> delete(String group, long waitMs) {
    return store.requestRemoval(group).compose(found -> found ? gone(group, System.currentTimeMillis() + waitMs)
        : Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "No events consumer has share group " + group
            + "; tidemark consumers list shows each consumer's share_group.")));
  }

  private Future<Boolean> gone(String group, long deadlineMs) {
    return store.exists(group).compose(exists -> {
      if (!exists || System.currentTimeMillis() >= deadlineMs) {
        return Future.succeededFuture(!exists);
      }
      Promise<Boolean> later = Promise.promise();
      vertx.setTimer(POLL_MS, t -> gone(group, deadlineMs).onComplete(later));
      return later.future();
    });
  }
}
