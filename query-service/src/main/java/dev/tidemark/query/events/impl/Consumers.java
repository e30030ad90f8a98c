package dev.tidemark.query.events.impl;

import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import dev.tidemark.query.events.impl.ConsumerStore.Created;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A caller's consumers: found, or made on first use with the group configured before anyone joins it. */
public final class Consumers {

  private static final Logger LOG = LoggerFactory.getLogger(Consumers.class);

  private final ConsumerStore store;
  private final GroupAdmin admin;
  private final DeadLetters deadLetters;
  private final SharePool pool;

  public Consumers(ConsumerStore store, GroupAdmin admin, DeadLetters deadLetters, SharePool pool) {
    this.store = store;
    this.admin = admin;
    this.deadLetters = deadLetters;
    this.pool = pool;
  }

  /** The caller's consumer {@code name}, created when it does not exist yet (its group configured before anyone joins it). */
  Future<Created> findOrCreate(Caller caller, String name, List<String> tables, int leaseSeconds) {
    Group known = pool.group(store.groupId(caller.id(), name));
    if (known != null) {
      return Future.succeededFuture(new Created(known.consumer, false));
    }
    return store.find(caller.id(), name).compose(found -> {
      if (found.isPresent()) {
        // configured again on each node's first use: a creator that died before it configured the group leaves it right
        return admin.configure(found.get(), false).map(x -> new Created(found.get(), false));
      }
      Consumer wanted = new Consumer(caller.id(), name, store.groupId(caller.id(), name), tables, leaseSeconds, null, null, 0, 0,
          null, 0);
      // the topic's end before the consumer's creation time is taken: every change committed after
      // that time lies past it, so the group may start there instead of reading the whole topic
      Future<Map<TopicPartition, Long>> ends = admin.configure(wanted, true)
          .compose(x -> admin.partitions().compose(tps -> admin.offsets(tps, OffsetSpec.latest())).otherwise(Map.of()));
      return ends.compose(end -> deadLetters.topicFor(wanted.group())
          .compose(dlq -> store.create(caller.id(), name, tables, leaseSeconds, dlq)).compose(created -> {
            Future<Void> started = !created.created() || end.isEmpty() ? Future.succeededFuture()
                : admin.move(created.consumer().group(), end).otherwise(err -> {
                  LOG.debug("events: consumer {} starts at the topic's oldest record: {}", name, err.toString());
                  return null;
                });
            return started.compose(x -> admin.configure(created.consumer(), false)).map(created);
          }));
    });
  }

  /** The caller's consumer {@code name}; NOT_FOUND when there is none. */
  Future<Consumer> existing(Caller caller, String name) {
    return store.find(caller.id(), name).compose(found -> found.map(Future::succeededFuture).orElseGet(() -> Future.failedFuture(
        new ToolException(ErrorCode.NOT_FOUND, "You have no consumer named " + name + "; events_next creates it.",
            new JsonObject().put("argument", "consumer")))));
  }
}
