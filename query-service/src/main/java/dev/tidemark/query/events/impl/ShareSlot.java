package dev.tidemark.query.events.impl;

import dev.tidemark.runtime.OwnThread;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One Kafka share consumer in explicit acknowledgement mode, on a thread of its own: the client
 * blocks and is not thread-safe, so every call to it runs there, and results come back on the
 * verticle's context. It hands out one batch at a time, since it cannot poll again before every
 * record of the last batch was acknowledged. The lease it holds ({@link #lease}) is read and
 * written on the verticle's context only.
 */
public final class ShareSlot {

  /** The records of one batch that a caller holds, by event id (a change published twice has two records). */
  public static final class Lease {
    public final long batch;
    public final long expiresAtMs;
    public final Map<String, List<ConsumerRecord<String, String>>> records;
    public final java.util.Set<String> resolved = new java.util.HashSet<>();
    public long timer = -1;

    public Lease(long batch, long expiresAtMs, Map<String, List<ConsumerRecord<String, String>>> records) {
      this.batch = batch;
      this.expiresAtMs = expiresAtMs;
      this.records = records;
    }

    public boolean done() {
      return resolved.size() == records.size();
    }
  }

  public final String id;
  public final int maxRecords;
  private final OwnThread thread;
  private final KafkaShareConsumer<String, String> consumer;
  private volatile boolean closed;
  /** True while a poll waits: only then may close() wake the client (see {@link #close}). */
  private volatile boolean polling;
  public boolean busy;
  /** When it last finished a call or a lease, for closing share consumers nobody uses. */
  public long idleSinceMs = System.currentTimeMillis();
  public Lease lease;
  /** The last lease it finished, so that an ack sent again for it is answered as the first was. */
  public Lease finished;
  private long batches;

  /** @param props the client settings of every Kafka client of Tidemark's, plus the group */
  public ShareSlot(String id, Context context, Map<String, Object> props, String topic, int maxRecords) {
    this.id = id;
    this.maxRecords = maxRecords;
    this.thread = new OwnThread("tidemark-events-" + id, context, "the share consumer is closed");
    Map<String, Object> p = new java.util.HashMap<>(props);
    p.put("share.acknowledgement.mode", "explicit");
    // take exactly as many records as the caller may be handed: every record taken is locked
    p.put("share.acquire.mode", "record_limit");
    p.put("max.poll.records", maxRecords);
    p.put("key.deserializer", StringDeserializer.class);
    p.put("value.deserializer", StringDeserializer.class);
    this.consumer = new KafkaShareConsumer<>(p);
    thread.run(() -> {
      consumer.subscribe(List.of(topic));
      return null;
    });
  }

  public boolean closed() {
    return closed;
  }

  public long nextBatch() {
    return ++batches;
  }

  /**
   * Polls until a record that {@code skip} does not take arrives or {@code waitMs} passed; each
   * skipped record is accepted (acknowledged, never delivered again) on the way.
   */
  public Future<List<ConsumerRecord<String, String>>> poll(long waitMs, Predicate<ConsumerRecord<String, String>> skip) {
    return thread.run(() -> {
      long deadline = System.nanoTime() + waitMs * 1_000_000L;
      List<ConsumerRecord<String, String>> kept = new ArrayList<>();
      polling = true;
      try {
        do {
          long left = Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
          boolean skipped = false;
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(left))) {
            if (skip.test(r)) {
              consumer.acknowledge(r, AcknowledgeType.ACCEPT);
              skipped = true;
            } else {
              kept.add(r);
            }
          }
          if (kept.isEmpty() && skipped) {
            consumer.commitSync();
          }
        } while (kept.isEmpty() && !closed && System.nanoTime() < deadline);
      } catch (WakeupException e) {
        // closed while it waited: close() releases whatever it took
      } finally {
        polling = false;
      }
      return kept;
    });
  }

  /** Acknowledges {@code records} as {@code type} and commits; what the broker refused, by partition. */
  public Future<List<KafkaException>> acknowledge(List<ConsumerRecord<String, String>> records, AcknowledgeType type) {
    return thread.run(() -> {
      for (ConsumerRecord<String, String> r : records) {
        consumer.acknowledge(r, type);
      }
      List<KafkaException> failed = new ArrayList<>();
      for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : consumer.commitSync().entrySet()) {
        e.getValue().ifPresent(failed::add);
      }
      return failed;
    });
  }

  /** Acknowledges {@code records} as {@code type} without committing: the next commit or poll sends them. */
  public Future<Void> acknowledgeLater(List<ConsumerRecord<String, String>> records, AcknowledgeType type) {
    return thread.run(() -> {
      records.forEach(r -> consumer.acknowledge(r, type));
      return null;
    });
  }

  /** Closes the client: what it acknowledged is committed, every record it still holds goes back to the broker. */
  public Future<Void> close() {
    if (closed) {
      return Future.succeededFuture();
    }
    closed = true;
    // a wake-up would also break an acknowledgement's commit that is under way, whose records
    // close() then commits anyway: its caller would hear of a failure for an acknowledgement that
    // was applied. So only a waiting poll is woken; anything else finishes before the close runs.
    if (polling) {
      consumer.wakeup();
    }
    Future<Void> done = thread.run(() -> {
      try {
        consumer.close(Duration.ofSeconds(5));
      } catch (RuntimeException e) {
        // closing is best effort: a dropped connection hands the records back as well
      }
      return null;
    });
    thread.shutdown();
    return done;
  }
}
