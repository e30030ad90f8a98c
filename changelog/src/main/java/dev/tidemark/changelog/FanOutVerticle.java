package dev.tidemark.changelog;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs on every gateway node: reads the database's changelog topic from its end and publishes
 * each change on this node's event bus only ({@link Addresses#changes}, schema changes on
 * {@link Addresses#schemaChanges}), where the node's subscriptions turn it into notifications.
 * Each node reads every partition itself (manual assignment, no consumer group), so no two nodes
 * share the work and none is skipped. The poll loop has its own thread: it blocks.
 */
public final class FanOutVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(FanOutVerticle.class);
  private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

  private final NodeInfo node;
  private final TidemarkConfig config;
  private volatile boolean running = true;
  private KafkaConsumer<String, String> consumer;
  private Thread thread;

  public FanOutVerticle(NodeInfo node, TidemarkConfig config) {
    this.node = node;
    this.config = config;
  }

  @Override
  public Future<?> start() {
    Promise<Void> positioned = Promise.promise();
    Context ctx = context;
    thread = new Thread(() -> run(ctx, positioned), "tidemark-fanout-" + config.database().name());
    thread.setDaemon(true);
    thread.start();
    // a node whose broker is down still starts: the loop keeps trying, and starts from the end
    // of the topic once it can reach it
    return positioned.future().timeout(config.kafka().requestTimeoutMs() * 2, java.util.concurrent.TimeUnit.MILLISECONDS)
        .otherwiseEmpty();
  }

  @Override
  public Future<?> stop() {
    running = false;
    KafkaConsumer<String, String> c = consumer;
    if (c != null) {
      c.wakeup();
    }
    return vertx.executeBlocking(() -> {
      thread.join(5_000);
      return null;
    });
  }

  private void run(Context ctx, Promise<Void> positioned) {
    String topic = config.kafka().topicFor(config.database().name());
    Map<String, Object> props = config.kafka().clientProperties();
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, "tidemark-fanout-" + node.nodeId() + "-" + config.database().name());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) config.kafka().requestTimeoutMs());
    props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) config.kafka().requestTimeoutMs());
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props)) {
      consumer = c;
      while (running && !assign(c, topic)) {
        // the topic is created by the changelog role, perhaps on another node that starts later
        java.util.concurrent.locks.LockSupport.parkNanos(500_000_000L);
      }
      positioned.tryComplete();
      LOG.info("node {} fans out {} to its local event bus", node.nodeId(), topic);
      Map<Integer, ChangePosition> last = new HashMap<>();
      while (running) {
        List<ChangelogRecord> polled = new ArrayList<>();
        for (ConsumerRecord<String, String> record : c.poll(Duration.ofMillis(500))) {
          ChangelogRecord change;
          try {
            change = ChangelogRecord.withoutImages(record.value());
          } catch (RuntimeException e) {
            LOG.warn("skipping a malformed record at {}-{}@{}", record.topic(), record.partition(), record.offset());
            continue;
          }
          ChangePosition seen = last.get(record.partition());
          if (seen != null && !change.position().isAfter(seen)) {
            continue;  // published again by a relay that restarted
          }
          last.put(record.partition(), change.position());
          polled.add(change);
        }
        if (!polled.isEmpty()) {
          // one task per poll, not per change: a busy changelog would otherwise queue thousands a second
          ctx.runOnContext(v -> polled.forEach(change -> {
            try {
              deliver(change);
            } catch (RuntimeException e) {
              // one record that makes no notice (a schema change without its command) stops none after it
              LOG.warn("skipping the change at {}: {}", change.position(), e.toString());
            }
          }));
        }
      }
    } catch (WakeupException e) {
      // stop() woke the poll
    } catch (RuntimeException e) {
      if (running) {
        LOG.error("the fan-out of {} stopped: {}", topic, e.toString());
      }
    }
  }

  /** Assigns every partition at its end; false (after a pause) when the topic is not there yet. */
  private boolean assign(KafkaConsumer<String, String> c, String topic) {
    try {
      List<PartitionInfo> partitions = c.partitionsFor(topic, Duration.ofMillis(config.kafka().requestTimeoutMs()));
      if (partitions == null || partitions.isEmpty()) {
        return false;
      }
      List<TopicPartition> tps = partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
      c.assign(tps);
      c.seekToEnd(tps);
      tps.forEach(c::position);  // resolve the end now, so that nothing after start is missed
      return true;
    } catch (WakeupException e) {
      throw e;
    } catch (RuntimeException e) {
      LOG.warn("the fan-out cannot read {} from Kafka at {} (kafka.bootstrap-servers) yet, and tries again: {}", topic,
          config.kafka().bootstrapServers(), e.toString());
      return false;
    }
  }

  private void deliver(ChangelogRecord change) {
    String database = config.database().name();
    if (change.isDdl()) {
      vertx.eventBus().publish(Addresses.schemaChanges(database), change.toSchemaNotice().toJson(), LOCAL);
    } else {
      vertx.eventBus().publish(Addresses.changes(database), change.toNotice().toJson(), LOCAL);
    }
  }
}
