package dev.tidemark.query.events.impl;

import static dev.tidemark.query.events.impl.EventErrors.unavailable;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolException;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's Kafka {@link Admin} for the events tools: share-group configs, the changelog topic's
 * partitions and offsets. Its futures complete on the verticle's context, so what follows them may
 * touch the verticle's state.
 */
public final class GroupAdmin {

  private static final Logger LOG = LoggerFactory.getLogger(GroupAdmin.class);

  private final Context context;
  private final TidemarkConfig config;
  private final String topic;
  private final Admin admin;

  public GroupAdmin(Context context, NodeInfo node, TidemarkConfig config) {
    this.context = context;
    this.config = config;
    this.topic = config.kafka().topicFor(config.database().name());
    Map<String, Object> props = config.kafka().clientProperties();
    props.put("request.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("default.api.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("client.id", "tidemark-events-admin-" + node.nodeId());
    this.admin = Admin.create(props);
  }

  Admin client() {
    return admin;
  }

  String topic() {
    return topic;
  }

  /**
   * Sets the share group's configs: its lock is the lease, its delivery limit one above
   * {@code events.max-deliveries} (the delivery past Tidemark's limit is the one it dead-letters),
   * and a group that never had a position starts at the oldest record, from which the consumer's
   * creation time filters what came before it (so nothing committed after creation is missed,
   * however late the first poll). {@code validateOnly}: only ask the broker whether it would take them.
   */
  Future<Void> configure(Consumer c, boolean validateOnly) {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, c.group());
    List<AlterConfigOp> ops = new ArrayList<>(List.of(
        new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", String.valueOf(c.leaseSeconds() * 1000L)), AlterConfigOp.OpType.SET),
        // with the broker's dead-letter topic the broker dead-letters at the limit; else the delivery
        // past Tidemark's limit reaches Tidemark, which dead-letters it
        new AlterConfigOp(new ConfigEntry("share.delivery.count.limit",
            String.valueOf(config.events().maxDeliveries() + (c.deadLetterTopic() == null ? 1 : 0))), AlterConfigOp.OpType.SET)));
    if (c.deadLetterTopic() != null) {
      ops.add(new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.topic.name", c.deadLetterTopic()), AlterConfigOp.OpType.SET));
      ops.add(new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.copy.record.enable", "true"), AlterConfigOp.OpType.SET));
    }
    Future<Void> set = kafka(admin.incrementalAlterConfigs(Map.of(resource, ops), new AlterConfigsOptions().validateOnly(validateOnly)).all());
    return (validateOnly ? set : set.compose(x -> assignPromptly(resource)))
        .recover(err -> Future.failedFuture(err instanceof InvalidConfigurationException || err instanceof InvalidRequestException
            ? new ToolException(ErrorCode.INVALID_ARGUMENTS, "The broker refuses lease_seconds " + c.leaseSeconds() + ": " + err.getMessage()
                + " Use a lease within the broker's group.share.min.record.lock.duration.ms and group.share.max.record.lock.duration.ms"
                + " (15 to 60 seconds unless the operator changed them).", new JsonObject().put("argument", "lease_seconds"))
            : unavailable("Kafka did not take the consumer's settings: " + err.getMessage())));
  }

  /**
   * Asks the group coordinator to assign a joining share consumer its partitions in the answer to
   * its first heartbeat: computed at once on the coordinator's thread, not batched every
   * {@code share.assignment.interval.ms} (a second by default) nor left to a background thread,
   * which would leave the member without partitions until its next heartbeat
   * ({@code group.share.heartbeat.interval.ms}, five seconds by default). A share consumer's first
   * poll waits for that, so it is the first lease's latency on every new share consumer. A broker
   * that does not know these group configs, or whose operator bounds them, keeps its own:
   * that costs latency only, so the refusal is logged and the consumer served all the same.
   */
  private Future<Void> assignPromptly(ConfigResource resource) {
    List<AlterConfigOp> ops = List.of(
        new AlterConfigOp(new ConfigEntry("share.assignment.interval.ms", "0"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("share.assignor.offload.enable", "false"), AlterConfigOp.OpType.SET));
    return kafka(admin.incrementalAlterConfigs(Map.of(resource, ops)).all()).otherwise(err -> {
      LOG.info("events: the broker keeps its own assignment interval for share group {}: {}", resource.name(), err.toString());
      return null;
    });
  }

  /** Completes with true once the share group has no members (or does not exist), with false at {@code deadlineMs}. */
  Future<Boolean> awaitEmpty(String group, long deadlineMs) {
    return members(group).compose(n -> {
      if (n == 0) {
        return Future.succeededFuture(true);
      }
      if (System.currentTimeMillis() > deadlineMs) {
        return Future.succeededFuture(false);
      }
      Promise<Boolean> later = Promise.promise();
      context.owner().setTimer(200, t -> awaitEmpty(group, deadlineMs).onComplete(later));
      return later.future();
    });
  }

  /** The share group's members now, each a share consumer of some node: 0 for a group the broker does not know. */
  Future<Integer> members(String group) {
    return kafka(admin.describeShareGroups(List.of(group)).all())
        .map(d -> d.get(group) == null ? 0 : d.get(group).members().size())
        .recover(err -> err instanceof GroupIdNotFoundException ? Future.succeededFuture(0) : Future.failedFuture(err));
  }

  /** Deletes the share group, its position and its state on the broker; one already gone is no failure. */
  Future<Void> deleteGroup(String group) {
    return kafka(admin.deleteShareGroups(List.of(group)).all())
        .recover(err -> err instanceof GroupIdNotFoundException ? Future.succeededFuture() : Future.failedFuture(err));
  }

  /**
   * Deletes every config set on the group ({@link #configure}'s): the broker keeps a group's
   * configs after the group itself is deleted.
   */
  Future<Void> deleteConfigs(String group) {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
    return kafka(admin.describeConfigs(List.of(resource)).all()).compose(configs -> {
      List<AlterConfigOp> ops = configs.get(resource).entries().stream()
          .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG)
          .map(e -> new AlterConfigOp(new ConfigEntry(e.name(), ""), AlterConfigOp.OpType.DELETE)).toList();
      return ops.isEmpty() ? Future.succeededFuture() : kafka(admin.incrementalAlterConfigs(Map.of(resource, ops)).all());
    });
  }

  /** Deletes a topic; one already gone is no failure. */
  Future<Void> deleteTopic(String topic) {
    return kafka(admin.deleteTopics(List.of(topic)).all())
        .recover(err -> err instanceof UnknownTopicOrPartitionException ? Future.succeededFuture() : Future.failedFuture(err));
  }

  /** Moves the share group, which must have no members, to {@code offsets}. */
  Future<Void> move(String group, Map<TopicPartition, Long> offsets) {
    return kafka(admin.alterShareGroupOffsets(group, offsets).all());
  }

  Future<List<TopicPartition>> partitions() {
    return kafka(admin.describeTopics(List.of(topic)).allTopicNames())
        .map(d -> d.get(topic).partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList())
        .recover(err -> Future.failedFuture(unavailable("Kafka could not describe the changelog topic: " + err.getMessage())));
  }

  Future<Map<TopicPartition, Long>> offsets(List<TopicPartition> tps, OffsetSpec spec) {
    Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
    tps.forEach(tp -> ask.put(tp, spec));
    return kafka(admin.listOffsets(ask).all()).map(result -> {
      Map<TopicPartition, Long> out = new HashMap<>();
      // a time after the last record has no offset (-1): the partition's end
      result.forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    });
  }

  /** {@code f} on the verticle's context, failed with its cause rather than the future's wrapper. */
  <T> Future<T> kafka(KafkaFuture<T> f) {
    Promise<T> promise = Promise.promise();
    f.whenComplete((value, err) -> context.runOnContext(v -> {
      if (err == null) {
        promise.complete(value);
      } else {
        Throwable cause = err;
        while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
          cause = cause.getCause();
        }
        promise.fail(cause);
      }
    }));
    return promise.future();
  }

  /** A share group's lag over the partitions reported: records not yet acknowledged, as the broker counts them. */
  public static long lag(Map<TopicPartition, SharePartitionOffsetInfo> infos) {
    long lag = 0;
    for (SharePartitionOffsetInfo info : infos.values()) {
      lag += info == null ? 0 : info.lag().orElse(0L);
    }
    return lag;
  }

  /** Closes the client on a worker: closing blocks. */
  public Future<Void> close() {
    return context.owner().executeBlocking(() -> {
      admin.close(Duration.ofSeconds(2));
      return null;
    });
  }
}
