package dev.tidemark.changelog.impl;

import dev.tidemark.keys.ChangeCursor;
import dev.tidemark.keys.KeyRing;
import java.time.OffsetDateTime;
import dev.tidemark.changelog.ChangelogRecord;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.config.TidemarkConfig.ChangelogConfig;
import dev.tidemark.runtime.OwnThread;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the changelog table to the database's topic in position order (= commit order).
 *
 * <p>One relay publishes at a time: the one whose {@link SlotReader} streams the database's
 * replication slot (PostgreSQL lets one connection stream a slot at a time). It publishes what the
 * reader stored in {@code tidemark.changelog}, and only during that tenure; when the tenure ends, or
 * publishing fails, both stop, and the node tries again after {@code changelog.relay-poll-ms}.
 *
 * <p>Batches are pipelined: the relay reads the next batch while Kafka still acknowledges earlier
 * ones, up to {@link #MAX_BATCHES_IN_FLIGHT}. Every record is handed to the producer by one thread
 * of the relay's own, in position order, so the topic receives them in that order. Progress is
 * stored strictly in batch order and only once a batch and every batch before it were
 * acknowledged, so a relay killed mid-batch publishes again from the first change that was not
 * (never less): consumers drop positions they have already seen. The idempotent producer keeps
 * each attempt gapless and in order within a partition, on two conditions the relay sees to:
 * nothing is sent after a record the producer refused, and no batch is let expire (see
 * {@link #handOver} and {@link #send}). Each tenure has a producer of its own,
 * closed at once (its unsent records dropped) when the tenure ends: a producer kept across
 * tenures could deliver a failed tenure's later records once Kafka returned, after the earlier
 * ones had expired, and before the next tenure sent the earlier ones again, which a consumer
 * dropping repeated positions would then never see.
 */
public final class Relay {

  private static final Logger LOG = LoggerFactory.getLogger(Relay.class);
  /** More than a record's framing in a batch (offsets, lengths, timestamps, headers): the producer's own bound is below it. */
  private static final int RECORD_OVERHEAD_BYTES = 1024;
  /**
   * Batches handed to the producer and not yet acknowledged. Reading ahead hides a batch's
   * acknowledgement and progress update behind the next batch's read; the bound keeps memory and
   * the work repeated after a crash small.
   */
  static final int MAX_BATCHES_IN_FLIGHT = 4;

  /**
   * The next batch after (position $1, id $2), at most $3 changes, and only as many as keep the
   * images read before each change under $4 bytes (so at least one): the rest of that transaction,
   * then later ones. {@code available} is how many the count alone allowed. Two
   * parts, each reading at most the limit from each transaction: with one condition over both, a
   * batch inside a large transaction read and sorted every change of the transaction (and of the
   * next one), so a million-row transaction cost a thousand times its size.
   */
  private static final String BATCH = """
      SELECT * FROM (
        SELECT u.*, least(count(*) OVER (), $3) AS available,
               sum(coalesce(octet_length(u.before), 0) + coalesce(octet_length(u.after), 0)) OVER (ORDER BY u.position, u.id) AS upto
          FROM (
        (SELECT %1$s
           FROM tidemark.changelog c
           JOIN tidemark.changelog_commit k ON k.xid = c.xid
           LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid
          WHERE c.xid = (SELECT xid FROM tidemark.changelog_commit WHERE position = $1) AND c.id > $2
          ORDER BY c.id
          LIMIT $3)
        UNION ALL
        (SELECT %1$s
           FROM (SELECT position, xid, committed_at FROM tidemark.changelog_commit WHERE position > $1 ORDER BY position LIMIT $3) k
           CROSS JOIN LATERAL (SELECT * FROM tidemark.changelog c WHERE c.xid = k.xid ORDER BY c.id LIMIT $3) c
           LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid
          ORDER BY k.position, c.id
          LIMIT $3)) u
         ORDER BY u.position, u.id
         LIMIT $3) s
       WHERE s.upto - coalesce(octet_length(s.before), 0) - coalesce(octet_length(s.after), 0) < $4
       ORDER BY position, id""".formatted("""
      k.position, c.id, k.committed_at, c.xid::text AS xid, c.schema_name, c.table_name, c.op, c.key, c.before::text AS before,
      c.after::text AS after, coalesce(a.caller, c.caller) AS caller, coalesce(a.tool, c.tool) AS tool,
      coalesce(a.idempotency_key, c.idempotency_key) AS idempotency_key, coalesce(a.plan_id, c.plan_id) AS plan_id""");

  private static final String STORE = "UPDATE tidemark.changelog_state SET published_commit = $1, published_change = $2";

  private static final String PRUNE = """
      WITH old AS (
        DELETE FROM tidemark.changelog_commit k USING tidemark.changelog_state s
         WHERE k.committed_at < now() - make_interval(secs => $1) AND k.position <= s.published_commit
        RETURNING k.position, k.xid),
      gone AS (
        DELETE FROM tidemark.changelog c USING old WHERE c.xid = old.xid RETURNING old.position, c.id),
      attributed AS (
        DELETE FROM tidemark.change_attribution a WHERE a.created_at < now() - make_interval(secs => $1)),
      plans AS (
        DELETE FROM tidemark.plan_change p WHERE p.created_at < now() - interval '1 hour'),
      last AS (SELECT position, id FROM gone ORDER BY position DESC, id DESC LIMIT 1)
      UPDATE tidemark.changelog_state s SET pruned_commit = last.position, pruned_change = last.id
        FROM last
       WHERE (last.position, last.id) > (s.pruned_commit, s.pruned_change)
      RETURNING last.position""";

  private final Vertx vertx;
  private final Context context;
  private final PgConnectOptions connectOptions;
  private final PgConnectOptions keysOptions;
  private final ChangelogConfig config;
  private final Supplier<Producer<String, String>> producers;
  /** The first failure of a send of {@link #producer}: nothing more is sent with it once set. Made with it, on the sender's thread. */
  private AtomicReference<Throwable> producerFailed;
  /** The current tenure's producer, made on first use; only the sender's thread touches it. */
  private Producer<String, String> producer;
  private final String topic;
  /**
   * One thread of the relay's own for the producer: send() may block (metadata, a full buffer),
   * and on the shared worker pool the relay's turn waited behind every other blocking task of the
   * node (cluster-map calls of the gateway), seconds under load. A plain executor, not a Vert.x
   * worker executor: a task handed to a closed worker executor in order is rejected inside the
   * context's queue of ordered tasks, which then never runs the context's next blocking task (the
   * node's stop waited on one forever); here a late task fails its own future and nothing else.
   */
  private final OwnThread sender;

  private PgConnection conn;
  /** The key ring, read when a session starts and again every {@link #KEYS_REFRESH_MS}: it signs the records' cursors. */
  private KeyRing keys;
  /** Counts sessions (lock tenures), so that callbacks of a lost session change nothing. */
  private long session;
  /** The last position handed to the producer: where the next read starts. */
  private ChangePosition read = ChangePosition.START;
  /** The last position stored as published. */
  private ChangePosition published = ChangePosition.START;
  /** The last position acknowledged with every position before it; stored next. */
  private ChangePosition acknowledged = ChangePosition.START;
  /** Completes when every batch handed over so far is acknowledged, in batch order. */
  private Future<Void> acknowledgements = Future.succeededFuture();
  private int batchesInFlight;
  private boolean stopped;
  private boolean reading;
  private boolean storing;
  private boolean wakeAgain;
  private long pollTimer = -1;
  private long pruneTimer = -1;
  private long keysTimer = -1;
  static final long KEYS_REFRESH_MS = 10_000;
  private volatile boolean active;
  private volatile long publishedCount;
  private final Runnable onFailure;
  private final long ackTimeoutMs;
  private final int maxRecordBytes;
  private boolean inTenure;
  private long tenures;

  /**
   * Call on the changelog role's context: the relay's callbacks run there.
   *
   * @param producers makes a tenure's producer (on the relay's own thread)
   * @param onFailure called when publishing failed: it ends the slot reader's tenure
   * @param ackTimeoutMs how long a batch may wait for Kafka's acknowledgement before the attempt
   *     ends: the relay's own deadline, since the producer is never let to give a batch up itself
   * @param maxRecordBytes the largest record the producer and the topic accept
   * @param connectOptions the database the changelog is stored in
   * @param keysOptions the served database, whose key ring signs cursors, when the changelog is stored elsewhere; null otherwise
   */
  public Relay(Vertx vertx, PgConnectOptions connectOptions, PgConnectOptions keysOptions, ChangelogConfig config,
      Supplier<Producer<String, String>> producers, String topic, long ackTimeoutMs, int maxRecordBytes, Runnable onFailure) {
    this.keysOptions = keysOptions;
    this.onFailure = onFailure;
    this.ackTimeoutMs = ackTimeoutMs;
    this.maxRecordBytes = maxRecordBytes;
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.connectOptions = connectOptions;
    this.config = config;
    this.producers = producers;
    this.topic = topic;
    this.sender = new OwnThread("tidemark-relay-" + topic, context, "the relay stopped");
  }

  /** The slot reader's tenure started: publish what it stores. */
  public void tenureStarted() {
    if (stopped) {
      return;
    }
    inTenure = true;
    long mine = ++tenures;
    PgConnection.connect(vertx, connectOptions)
        .compose(c -> {
          if (!inTenure || mine != tenures) {
            return c.close();  // the tenure ended while connecting
          }
          conn = c;
          return takeOver();
        })
        .onFailure(this::failed);
  }

  /** The slot reader's tenure ended: stop publishing. */
  public void tenureEnded() {
    inTenure = false;
    release();
  }

  /** The slot reader stored changes. */
  public void wake() {
    pump();
  }

  /** True while this relay publishes. */
  public boolean active() {
    return active;
  }

  public long publishedCount() {
    return publishedCount;
  }

  public Future<Void> stop() {
    stopped = true;
    return release().onComplete(x -> sender.shutdown());
  }

  private Future<Void> readKeys(PgConnection c) {
    // the key ring is the served database's: with the changelog stored elsewhere, a short connection there
    return keysOptions == null ? readKeysOn(c)
        : PgConnection.connect(vertx, keysOptions).compose(k -> readKeysOn(k).eventually(k::close));
  }

  private Future<Void> readKeysOn(PgConnection c) {
    return c.query(KeyRing.SQL).execute().compose(rows -> {
      List<KeyRing.Key> read = new ArrayList<>();
      for (Row r : rows) {
        read.add(KeyRing.Key.of(r.getInteger("id"), r.getBuffer("secret").getBytes(), r.getOffsetDateTime("active_from"),
            r.getOffsetDateTime("retires_at")));
      }
      if (read.isEmpty()) {
        return Future.failedFuture(new IllegalStateException("tidemark.key_ring holds no key that is not retired"));
      }
      keys = new KeyRing(read);
      return Future.succeededFuture();
    });
  }

  private Future<Void> takeOver() {
    PgConnection c = conn;
    session++;
    c.closeHandler(v -> {
      if (conn == c && !stopped) {
        failed(new IllegalStateException("the relay's PostgreSQL connection closed"));
      }
    });
    // without a handler the client prints the error's stack itself (57P01 when PostgreSQL stops); the close handler acts on it
    c.exceptionHandler(err -> LOG.debug("the relay's PostgreSQL connection failed: {}", err.toString()));
    // no LISTEN: the slot reader beside it wakes it after each store (wake()), and the store's
    // notification is for the watches that wait on other nodes
    return readKeys(c)
        .compose(x -> c.query("SELECT published_commit, published_change FROM tidemark.changelog_state").execute())
        .map(rows -> {
          Row r = rows.iterator().next();
          published = new ChangePosition(r.getLong("published_commit"), r.getLong("published_change"));
          // a new session starts from what is stored: batches of a lost session may be sent again
          read = published;
          acknowledged = published;
          acknowledgements = Future.succeededFuture();
          batchesInFlight = 0;
          reading = false;
          storing = false;
          active = true;
          LOG.info("this node's relay publishes {} from position {}", topic, published);
          pollTimer = vertx.setPeriodic(config.relayPollMs(), t -> pump());
          pruneTimer = vertx.setPeriodic(config.pruneIntervalSeconds() * 1000, t -> prune());
          keysTimer = vertx.setPeriodic(KEYS_REFRESH_MS, t -> readKeys(c).onFailure(err ->
              LOG.warn("reading the key ring failed, keeping the keys last read: {}", err.getMessage())));
          pump();
          return null;
        });
  }

  /**
   * Reads the next batch and hands it to the producer, and goes on while batches are full and
   * fewer than {@link #MAX_BATCHES_IN_FLIGHT} wait for Kafka. A call while a read runs, or while
   * the pipeline is full, asks for one more round when that ends.
   */
  private void pump() {
    if (!active) {
      return;
    }
    if (reading || batchesInFlight >= MAX_BATCHES_IN_FLIGHT) {
      wakeAgain = true;
      return;
    }
    reading = true;
    wakeAgain = false;
    long mine = session;
    conn.preparedQuery(BATCH).execute(Tuple.of(read.commit(), read.change(), config.relayBatchSize(), config.relayBatchBytes()))
        .compose(rows -> rows.size() == 0 ? Future.succeededFuture(false) : handOver(mine, rows))
        .onComplete(ar -> {
          if (outlived(mine)) {
            return;
          }
          reading = false;
          if (ar.failed()) {
            failed(ar.cause());
          } else if (ar.result() || wakeAgain) {
            pump();
          }
        });
  }

  /** A callback of tenure {@code mine} that ended (the lock was lost or the relay stopped) changes nothing. */
  private boolean outlived(long mine) {
    return mine != session || !active;
  }

  /**
   * Hands a batch to the producer on the relay's thread; completes once every record was handed
   * over (true when the batch was full: as many changes as a batch holds, or cut short by its
   * bytes, so that more wait). Its acknowledgement is chained after the earlier batches'.
   */
  private Future<Boolean> handOver(long mine, RowSet<Row> rows) {
    Promise<ChangePosition> acked = Promise.promise();
    // The producer retries a batch for as long as the attempt lasts and never gives one up on its
    // own: one that did (its delivery timeout) bumps its epoch and sends the later batches, which
    // leaves a gap in the partition that the next attempt's records, arriving after them, cannot fill
    // for a consumer that drops positions it has passed. The relay's deadline ends the whole attempt instead.
    long deadline = vertx.setTimer(ackTimeoutMs, t -> acked.tryFail(new java.util.concurrent.TimeoutException(
        "Kafka did not acknowledge a batch within " + ackTimeoutMs + " ms")));
    acked.future().onComplete(x -> vertx.cancelTimer(deadline));
    return sender.run(() -> send(toRecords(rows), acked))
        .map(last -> {
          if (outlived(mine)) {
            return false;  // a hand-over that outlived its tenure: the next one starts from stored progress
          }
          read = last;
          batchesInFlight++;
          int size = rows.size();
          acknowledgements = acknowledgements.compose(x -> acked.future())
              .onComplete(ar -> {
                if (outlived(mine)) {
                  return;
                }
                if (ar.failed()) {
                  failed(ar.cause());
                  return;
                }
                batchesInFlight--;
                publishedCount += size;
                acknowledged = ar.result();
                store(mine);
                if (wakeAgain) {
                  pump();
                }
              })
              .mapEmpty();
          long available = rows.iterator().next().getLong("available");
          return size == config.relayBatchSize() || size < available;
        });
  }

  /**
   * On the relay's thread: sends every record and returns the batch's last position. {@code acked}
   * completes, on the relay's context, once Kafka acknowledged every record of the batch, or fails
   * with the first error. No flush(): the send callbacks say when each record is in, and flushing
   * would hold the relay's thread until the whole pipeline drained.
   */
  private ChangePosition send(List<Outgoing> records, Promise<ChangePosition> acked) {
    ChangePosition last = records.get(records.size() - 1).position();
    AtomicInteger waiting = new AtomicInteger(records.size());
    if (producer == null) {
      producer = producers.get();
      producerFailed = new AtomicReference<>();
    }
    // per producer, not per batch: the next batch's sends may run before this one's failure is handled
    AtomicReference<Throwable> failed = producerFailed;
    for (Outgoing record : records) {
      if (failed.get() != null) {
        // A record the producer refused on this thread (no metadata within max.block.ms, as when
        // the broker is coming back) was answered before send() returned and never got a sequence
        // number, so the broker would take the records after it: a gap that the next attempt's copy,
        // arriving after them, cannot fill. Nothing after a failed record is sent.
        break;
      }
      String value = record.value();
      if (tooLarge(record.kafkaKey(), value)) {
        // refused here rather than by the producer's own check, so that the error names the change
        RecordTooLargeException err = new RecordTooLargeException("the change at " + record.position() + " makes a record larger than "
            + maxRecordBytes + " bytes; publishing waits behind it until the row is smaller or the limit larger");
        failed.compareAndSet(null, err);
        context.runOnContext(v -> acked.tryFail(err));
        return last;
      }
      producer.send(new ProducerRecord<>(topic, record.kafkaKey(), value), (metadata, err) -> {
        // the producer's I/O thread calls back: hand the outcome to the relay's context
        if (err != null) {
          failed.compareAndSet(null, err);
          context.runOnContext(v -> acked.tryFail(err));
        } else if (waiting.decrementAndGet() == 0) {
          context.runOnContext(v -> acked.tryComplete(last));
        }
      });
    }
    Throwable first = failed.get();
    if (first != null) {
      // some records of this batch may never have been sent: it fails too, with the attempt's first error
      context.runOnContext(v -> acked.tryFail(first));
    }
    return last;
  }

  /** Whether key and value, with room for the record's own framing, exceed what the producer sends. */
  private boolean tooLarge(String key, String value) {
    long upperBound = 3L * (key.length() + value.length()) + RECORD_OVERHEAD_BYTES;
    return upperBound > maxRecordBytes && key.getBytes(StandardCharsets.UTF_8).length
        + (long) value.getBytes(StandardCharsets.UTF_8).length + RECORD_OVERHEAD_BYTES > maxRecordBytes;
  }

  /** Stores the acknowledged position; one UPDATE at a time, the newest position each time. */
  private void store(long mine) {
    if (storing || !acknowledged.isAfter(published)) {
      return;
    }
    storing = true;
    ChangePosition target = acknowledged;
    conn.preparedQuery(STORE).execute(Tuple.of(target.commit(), target.change()))
        .onComplete(ar -> {
          if (outlived(mine)) {
            return;
          }
          storing = false;
          if (ar.failed()) {
            failed(ar.cause());
            return;
          }
          published = target;
          store(mine);
        });
  }

  /** A record as it goes to Kafka: its value is what {@link ChangelogRecord#fromJson} reads. */
  private record Outgoing(ChangePosition position, String kafkaKey, String value) {}

  /**
   * The batch's records. The images are copied into the value as PostgreSQL wrote them (jsonb's
   * text), never parsed and written again: they are most of a record, and of the relay's work.
   */
  private List<Outgoing> toRecords(RowSet<Row> rows) {
    List<Outgoing> records = new ArrayList<>(rows.size());
    for (Row r : rows) {
      ChangePosition position = new ChangePosition(r.getLong("position"), r.getLong("id"));
      String schema = r.getString("schema_name");
      String table = r.getString("table_name");
      Object key = r.getValue("key");
      String value = RecordValues.write(w -> {
        w.writeStringField("schema", schema);
        w.writeStringField("table", table);
        w.writeStringField("op", r.getString("op"));
        w.writeStringField("committed_at", r.getOffsetDateTime("committed_at").toString());
        w.writeStringField("transaction", r.getString("xid"));
        if (key != null) {
          w.writeFieldName("key");
          w.writeRawValue(io.vertx.core.json.Json.encode(key));
        }
        RecordValues.rawField(w, "before", r.getString("before"));
        RecordValues.rawField(w, "after", r.getString("after"));
        RecordValues.stringField(w, "caller", r.getString("caller"));
        RecordValues.stringField(w, "tool", r.getString("tool"));
        RecordValues.stringField(w, "idempotency_key", r.getString("idempotency_key"));
        RecordValues.stringField(w, "plan_id", r.getString("plan_id"));
        w.writeObjectFieldStart("position");
        w.writeNumberField("commit", position.commit());
        w.writeNumberField("change", position.change());
        w.writeEndObject();
        w.writeStringField("cursor", ChangeCursor.encode(position, keys));
      });
      records.add(new Outgoing(position, ChangelogRecord.kafkaKey(schema, table, key), value));
    }
    return records;
  }

  private void prune() {
    if (!active) {
      return;
    }
    conn.preparedQuery(PRUNE).execute(Tuple.of((double) config.retentionSeconds()))
        .onSuccess(rows -> {
          if (rows.size() > 0) {
            LOG.info("pruned the changelog through commit {}", rows.iterator().next().getLong(0));
          }
        })
        .onFailure(err -> LOG.warn("pruning the changelog failed: {}", describe(err)));
  }

  private void failed(Throwable err) {
    if (stopped) {
      return;
    }
    LOG.warn("the relay stops publishing: {}", describe(err));
    release().onComplete(x -> onFailure.run());
  }

  /** Ends this tenure's publishing; callbacks of the tenure change nothing after it. */
  private Future<Void> release() {
    active = false;
    vertx.cancelTimer(pollTimer);
    vertx.cancelTimer(pruneTimer);
    vertx.cancelTimer(keysTimer);
    PgConnection c = conn;
    conn = null;
    // after every send of the tenure (the sender's tasks run in order), before the next tenure's first
    Future<Void> producerClosed = sender.run(() -> {
      if (producer != null) {
        producer.close(Duration.ZERO);
        producer = null;
      }
      return null;
    }).<Void>mapEmpty().otherwiseEmpty();
    return c == null ? producerClosed : Future.join(c.close(), producerClosed).<Void>mapEmpty().otherwiseEmpty();
  }

  static String describe(Throwable err) {
    if (err instanceof PgException pg) {
      return "PostgreSQL SQLSTATE " + pg.getSqlState() + ": " + pg.getErrorMessage();
    }
    Throwable root = err;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
  }
}
