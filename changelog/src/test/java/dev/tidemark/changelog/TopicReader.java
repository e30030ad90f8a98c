package dev.tidemark.changelog;

import dev.tidemark.contract.ChangePosition;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a changelog topic from its beginning, as a consumer should: dropping a record whose
 * position is not after the last one taken from its partition. Counts what it dropped.
 */
public final class TopicReader implements AutoCloseable {
  private final KafkaConsumer<String, String> consumer;
  public final List<ChangelogRecord> records = new ArrayList<>();
  public final Map<ChangePosition, Integer> seen = new HashMap<>();
  private final Map<Integer, ChangePosition> last = new HashMap<>();
  public int duplicates;
  /** The records dropped as not after the last one taken from their partition. */
  public final List<ChangelogRecord> dropped = new ArrayList<>();

  public TopicReader(SharedInfra infra, String topic) {
    this(infra.kafkaBootstrapServers(), topic);
  }

  public TopicReader(String bootstrapServers, String topic) {
    consumer = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers,
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000,
        ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
        ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
    List<PartitionInfo> partitions = consumer.partitionsFor(topic, Duration.ofSeconds(30));
    List<TopicPartition> tps = partitions.stream().map(p -> new TopicPartition(topic, p.partition())).toList();
    consumer.assign(tps);
    consumer.seekToBeginning(tps);
  }

  /** Reads until {@code done} holds; each poll waits at most 200 ms. */
  public void readUntil(String what, Duration timeout, BooleanSupplier done) {
    Await.that(what, timeout, () -> {
      for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
        ChangelogRecord change = ChangelogRecord.fromJson(new JsonObject(r.value()));
        ChangePosition prev = last.get(r.partition());
        if (prev != null && !change.position().isAfter(prev)) {
          duplicates++;
          dropped.add(change);
          continue;
        }
        last.put(r.partition(), change.position());
        records.add(change);
        seen.merge(change.position(), 1, Integer::sum);
      }
      return done.getAsBoolean();
    });
  }

  /** The records taken of {@code table}, in the order read. */
  public List<ChangelogRecord> of(String table) {
    return records.stream().filter(r -> r.table().equals(table)).toList();
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(2));
  }
}
