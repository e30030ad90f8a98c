package dev.tidemark.query.events.impl;

import static dev.tidemark.query.events.impl.EventErrors.unavailable;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dead letters: the broker's dead-letter topic of a new group where the broker has one, copied
 * into {@code tidemark.event_dead_letter} when status or seek reads it; otherwise Tidemark's own,
 * stored there by the lease path. Either way a dead letter is counted and re-driven from one table.
 */
public final class DeadLetters {

  private static final Logger LOG = LoggerFactory.getLogger(DeadLetters.class);

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final GroupAdmin admin;
  private final ConsumerStore store;

  public DeadLetters(Vertx vertx, NodeInfo node, TidemarkConfig config, GroupAdmin admin, ConsumerStore store) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.admin = admin;
    this.store = store;
  }

  /** A dead letter as {@link ConsumerStore#deadLetter} stores it. */
  static JsonObject letter(int partition, long offset, int deliveryCount, JsonObject record) {
    return new JsonObject().put("partition", partition).put("offset", offset).put("event_id", Leases.eventId(record))
        .put("delivery_count", deliveryCount).put("record", record);
  }

  /**
   * The broker's dead-letter topic for a new group, created here: its name under the broker's
   * {@code errors.deadletterqueue.topic.name.prefix}, with {@code errors.deadletterqueue.group.enable};
   * null when the broker has no dead-letter support (share.version below 2), it is turned off, or
   * the topic cannot be made, and Tidemark dead-letters itself.
   */
  Future<String> topicFor(String group) {
    if (!config.events().brokerDeadLetters()) {
      return Future.succeededFuture(null);
    }
    return admin.kafka(admin.client().describeFeatures().featureMetadata()).compose(features -> {
      var share = features.finalizedFeatures().get("share.version");
      if (share == null || share.maxVersionLevel() < 2) {
        return Future.succeededFuture((String) null);
      }
      return admin.kafka(admin.client().describeCluster().nodes()).compose(nodes -> {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodes.iterator().next().id()));
        return admin.kafka(admin.client().describeConfigs(List.of(broker)).all());
      }).compose(configs -> {
        ConfigEntry prefix = configs.values().iterator().next().get("errors.deadletterqueue.topic.name.prefix");
        String topicName = (prefix == null || prefix.value() == null ? "dlq." : prefix.value()) + group;
        NewTopic dlq = new NewTopic(topicName, 1, config.kafka().topicReplicationFactor())
            .configs(Map.of("errors.deadletterqueue.group.enable", "true", "max.message.bytes", "16777216"));
        return admin.kafka(admin.client().createTopics(List.of(dlq)).all()).map(topicName)
            .recover(err -> err instanceof TopicExistsException ? Future.succeededFuture(topicName) : Future.failedFuture(err));
      });
    }).otherwise(err -> {
      LOG.info("events: the broker's dead-letter topic could not be used for {}, Tidemark dead-letters itself: {}", group, err.toString());
      return null;
    });
  }

  /** Copies what the broker wrote to the group's dead-letter topic since the last copy into tidemark.event_dead_letter. */
  Future<Void> copy(Consumer known) {
    if (known.deadLetterTopic() == null) {
      return Future.succeededFuture();
    }
    return store.find(known.owner(), known.name()).compose(found -> {
      Consumer c = found.orElse(known);
      Map<String, Object> props = config.kafka().clientProperties();
      props.put("key.deserializer", StringDeserializer.class);
      props.put("value.deserializer", StringDeserializer.class);
      props.put("enable.auto.commit", false);
      props.put("client.id", "tidemark-events-dlq-" + node.nodeId());
      return vertx.executeBlocking(() -> read(props, c)).compose(read -> store.copiedDeadLetters(c.group(), read.letters(), read.next()));
    }).recover(err -> Future.failedFuture(unavailable("Tidemark could not read the consumer's dead-letter topic: " + err.getMessage())));
  }

  private record Read(JsonArray letters, long next) {}

  /** Blocking: the topic's records from the consumer's copied offset to its end, or as far as the request timeout allows. */
  private Read read(Map<String, Object> props, Consumer c) {
    TopicPartition tp = new TopicPartition(c.deadLetterTopic(), 0);
    JsonArray letters = new JsonArray();
    try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(props)) {
      reader.assign(List.of(tp));
      reader.seek(tp, c.deadLetterOffset());
      long end = reader.endOffsets(List.of(tp)).get(tp);
      long deadline = System.currentTimeMillis() + config.kafka().requestTimeoutMs();
      while (reader.position(tp) < end && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(200))) {
          letters.add(letter(Integer.parseInt(header(r, "__dlq.errors.partition", "0")), Long.parseLong(header(r, "__dlq.errors.offset", "0")),
              Integer.parseInt(header(r, "__dlq.errors.delivery.count", "0")), new JsonObject(r.value())));
        }
      }
      return new Read(letters, reader.position(tp));
    }
  }

  private static String header(ConsumerRecord<String, String> r, String name, String otherwise) {
    var h = r.headers().lastHeader(name);
    return h == null ? otherwise : new String(h.value(), StandardCharsets.UTF_8);
  }
}
