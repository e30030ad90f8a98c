package dev.tidemark.query.events.impl;

import dev.tidemark.config.TidemarkConfig.EventsConfig;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.telemetry.metrics.EventsMeters;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import dev.tidemark.query.events.impl.ConsumerStore.Created;
import dev.tidemark.query.events.impl.ConsumerStore.Use;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A caller's consumers: found, or made on first use with the group configured before anyone joins
 * it, within the quotas of consumers per caller and per role (events.max-consumers-per-caller and
 * -per-role), which are checked before anything is made on the broker and again, in turn with the
 * role's other creations, as the row is stored.
 */
public final class Consumers {

  private static final Logger LOG = LoggerFactory.getLogger(Consumers.class);

  private final ConsumerStore store;
  private final GroupAdmin admin;
  private final DeadLetters deadLetters;
  private final SharePool pool;
  private final EventsConfig config;
  private final EventsMeters meters;

  public Consumers(ConsumerStore store, GroupAdmin admin, DeadLetters deadLetters, SharePool pool, EventsConfig config, EventsMeters meters) {
    this.store = store;
    this.admin = admin;
    this.deadLetters = deadLetters;
    this.pool = pool;
    this.config = config;
    this.meters = meters;
  }

  /** The caller's consumer {@code name}, created when it does not exist yet (its group configured before anyone joins it). */
  Future<Created> findOrCreate(Caller caller, String name, List<String> tables, int leaseSeconds) {
    String groupId = store.groupId(caller.id(), name);
    if (pool.held(groupId)) {
      return Future.failedFuture(EventErrors.held(name));
    }
    Group known = pool.group(groupId);
    if (known != null) {
      return Future.succeededFuture(new Created(known.consumer, false));
    }
    return store.find(caller.id(), name).compose(found -> {
      if (found.isPresent()) {
        // configured again on each node's first use: a creator that died before it configured the group leaves it right
        return admin.configure(found.get(), false).map(x -> new Created(found.get(), false));
      }
      Consumer wanted = new Consumer(caller.id(), name, store.groupId(caller.id(), name), tables, leaseSeconds, null, null, 0, 0,
          null, 0, caller.pgRole(), null);
      // the topic's end before the consumer's creation time is taken: every change committed after
      // that time lies past it, so the group may start there instead of reading the whole topic
      Future<Map<TopicPartition, Long>> ends = store.use(caller).compose(this::allowed)
          .compose(x -> admin.configure(wanted, true))
          .compose(x -> admin.partitions().compose(tps -> admin.offsets(tps, OffsetSpec.latest())).otherwise(Map.of()));
      return ends.compose(end -> deadLetters.topicFor(wanted.group())
          .compose(dlq -> store.create(caller, name, tables, leaseSeconds, dlq, this::allowed)
              // a creation of the role that got in first took the last place: the topic made for this one goes
              .recover(err -> dlq == null || !(err instanceof ToolException te && te.code() == ErrorCode.LIMIT_EXCEEDED)
                  ? Future.failedFuture(err) : admin.deleteTopic(dlq).transform(x -> Future.failedFuture(err))))
          .compose(created -> {
            Future<Void> started = !created.created() || end.isEmpty() ? Future.succeededFuture()
                : admin.move(created.consumer().group(), end).otherwise(err -> {
                  LOG.debug("events: consumer {} starts at the topic's oldest record: {}", name, err.toString());
                  return null;
                });
            return started.compose(x -> admin.configure(created.consumer(), false)).map(created);
          }));
    });
  }

  /** Fails with LIMIT_EXCEEDED when one more consumer would pass the caller's quota or its role's. */
  private Future<Void> allowed(Use use) {
    if (use.mine() >= config.maxConsumersPerCaller()) {
      return refused(EventErrors.quota("You have " + use.mine() + " events consumers in this database, the most one caller may have",
          PER_CALLER, config.maxConsumersPerCaller(), use.mine()));
    }
    if (use.role() >= config.maxConsumersPerRole()) {
      return refused(EventErrors.quota("The callers of your role have " + use.role() + " events consumers in this database, the"
          + " most they may have together", PER_ROLE, config.maxConsumersPerRole(), use.role()));
    }
    return Future.succeededFuture();
  }

  private Future<Void> refused(ToolException quota) {
    meters.refused(store.database(), quota.details().getString("limit"));
    return Future.failedFuture(quota);
  }

  static final String PER_CALLER = "events.max-consumers-per-caller";
  static final String PER_ROLE = "events.max-consumers-per-role";

  /** The caller's consumer {@code name}; NOT_FOUND when there is none. */
  Future<Consumer> existing(Caller caller, String name) {
    return store.find(caller.id(), name).compose(found -> found.map(Future::succeededFuture).orElseGet(() -> Future.failedFuture(
        new ToolException(ErrorCode.NOT_FOUND, "You have no consumer named " + name + "; events_next creates it.",
            new JsonObject().put("argument", "consumer")))));
  }
}
