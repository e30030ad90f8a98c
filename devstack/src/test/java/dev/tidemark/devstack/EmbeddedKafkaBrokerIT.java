package dev.tidemark.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedKafkaBrokerIT {

  @Test
  void temporaryBrokerRoundTripsAnIdempotentRecordAndCleansUp() throws Exception {
    long t0 = System.nanoTime();
    EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.start(null, Map.of());
    System.out.printf("Kafka temporary start took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
    Path logDir = kafka.logDir();
    try {
      assertTrue(kafka.bootstrapServers().startsWith("127.0.0.1:"));
      createTopic(kafka, "tidemark.it.roundtrip");
      produce(kafka, "tidemark.it.roundtrip", "row-1", "inserted");
      assertEquals("inserted", consumeOne(kafka, "tidemark.it.roundtrip", "row-1"));
    } finally {
      long c0 = System.nanoTime();
      kafka.close();
      System.out.printf("Kafka close took %d ms%n", (System.nanoTime() - c0) / 1_000_000);
    }
    kafka.close();
    assertFalse(Files.exists(logDir), "a temporary log folder is deleted on close()");
  }

  @Test
  void persistentLogDirSurvivesARestartOnNewPorts(@TempDir Path dir) throws Exception {
    Path logDir = dir.resolve("kafka");
    String firstBootstrap;
    try (EmbeddedKafkaBroker first = EmbeddedKafkaBroker.start(logDir, Map.of())) {
      firstBootstrap = first.bootstrapServers();
      createTopic(first, "tidemark.it.durable");
      produce(first, "tidemark.it.durable", "row-7", "kept");
    }
    assertTrue(Files.exists(logDir.resolve("meta.properties")));

    long t0 = System.nanoTime();
    try (EmbeddedKafkaBroker second = EmbeddedKafkaBroker.start(logDir, Map.of())) {
      System.out.printf("Kafka restart on existing data took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      assertFalse(firstBootstrap.equals(second.bootstrapServers()), "ports are chosen anew each run");
      assertEquals("kept", consumeOne(second, "tidemark.it.durable", "row-7"));
    }
    assertTrue(Files.exists(logDir.resolve("meta.properties")), "a persistent log folder is kept");
  }

  private static void createTopic(EmbeddedKafkaBroker kafka, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    }
  }

  private static void produce(EmbeddedKafkaBroker kafka, String topic, String key, String value) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      producer.send(new ProducerRecord<>(topic, key, value)).get();
    }
  }

  private static String consumeOne(EmbeddedKafkaBroker kafka, String topic, String key) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "it-" + System.nanoTime());
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (System.nanoTime() < deadline) {
        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
        for (ConsumerRecord<String, String> r : records) {
          if (key.equals(r.key())) {
            return r.value();
          }
        }
      }
    }
    throw new AssertionError("no record with key " + key + " on " + topic);
  }
}
