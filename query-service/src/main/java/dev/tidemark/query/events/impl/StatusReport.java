package dev.tidemark.query.events.impl;

import dev.tidemark.config.TidemarkConfig.EventsConfig;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * events_status: the share group's position and lag from the broker, leases from the cluster map,
 * counters and dead letters from PostgreSQL, and what the consumer holds: its share group and
 * dead-letter topic, the share consumers serving it, and when it is removed if nobody uses it.
 */
public final class StatusReport {

  private final GroupAdmin admin;
  private final Consumers consumers;
  private final DeadLetters deadLetters;
  private final ConsumerStore store;
  private final SharePool pool;
  private final EventsConfig config;

  public StatusReport(GroupAdmin admin, Consumers consumers, DeadLetters deadLetters, ConsumerStore store, SharePool pool,
      EventsConfig config) {
    this.admin = admin;
    this.consumers = consumers;
    this.deadLetters = deadLetters;
    this.store = store;
    this.pool = pool;
    this.config = config;
  }

  public Future<ToolReply> status(ToolRequest request) {
    String name = request.arguments().getString("consumer");
    return consumers.existing(request.caller(), name).compose(c -> admin.partitions().compose(tps -> {
      Future<Map<TopicPartition, SharePartitionOffsetInfo>> positions = admin.kafka(admin.client().listShareGroupOffsets(
          Map.of(c.group(), new ListShareGroupOffsetsSpec().topicPartitions(tps))).partitionsToOffsetInfo(c.group()))
          .otherwise(err -> Map.of());  // a group that never read has no position yet
      Future<Map<TopicPartition, Long>> earliest = admin.offsets(tps, OffsetSpec.earliest());
      Future<long[]> dead = deadLetters.copy(c).compose(x -> store.deadLetterCounts(c.group()));
      Future<Integer> leased = pool.leasedInCluster(c.group());
      Future<Integer> workers = admin.members(c.group()).otherwise(-1);
      return Future.all(positions, earliest, dead, leased, workers).map(x -> {
        JsonArray position = new JsonArray();
        long lag = positions.result() == null ? 0 : GroupAdmin.lag(positions.result());
        long missed = 0;
        for (TopicPartition tp : tps) {
          SharePartitionOffsetInfo info = positions.result() == null ? null : positions.result().get(tp);
          if (info == null) {
            continue;  // this consumer never read the partition yet
          }
          position.add(new JsonObject().put("partition", tp.partition()).put("offset", info.startOffset()));
          missed += Math.max(0, earliest.result().getOrDefault(tp, 0L) - info.startOffset());
        }
        long pending = Math.max(0, lag - leased.result());
        JsonObject out = new JsonObject().put("consumer", name).put("tables", new JsonArray(c.tables()))
            .put("lease_seconds", c.leaseSeconds()).put("created_at", c.createdAt().toString()).put("position", position)
            .put("leased", leased.result()).put("pending", pending).put("delivered", c.delivered()).put("redelivered", c.redelivered())
            .put("dead_lettered", dead.result()[0]).put("redriven", dead.result()[1]).put("lag", lag).put("missed", missed)
            .put("resources", resources(c, workers.result()));
        return ToolReply.ok("events_status: " + name + ", " + leased.result() + " leased, " + pending + " pending, "
            + dead.result()[0] + " dead-lettered" + (missed > 0 ? ", " + missed + " missed" : ""), out);
      });
    }));
  }

  /** What the consumer holds, and until when; {@code workers} -1 when the broker did not say. */
  private JsonObject resources(Consumer c, int workers) {
    int here = pool.openFor(c.group());
    JsonObject out = new JsonObject().put("share_group", c.group()).put("workers_here", here).put("threads_here", 2 * here)
        .put("last_used_at", c.lastUsedAt().toString());
    if (workers >= 0) {
      out.put("workers", workers);
    }
    if (c.deadLetterTopic() != null) {
      out.put("dead_letter_topic", c.deadLetterTopic());
    }
    if (config.consumerIdleSeconds() > 0) {
      out.put("removed_if_unused_until", c.lastUsedAt().plusSeconds(config.consumerIdleSeconds()).toString());
    }
    return out;
  }
}
