package dev.tidemark.changelog.impl;

import dev.tidemark.changelog.ChangelogRecord;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.contract.config.TidemarkConfig.ChangelogConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the changelog table to the database's topic in position order (= commit order).
 *
 * <p>One relay publishes at a time: the one whose connection holds a session advisory lock. A
 * relay that loses its connection loses the lock with it, and a standby takes over. Progress is
 * stored after Kafka acknowledged a whole batch, so a relay killed mid-batch publishes that batch
 * again (never less): consumers drop positions they have already seen. The idempotent producer
 * keeps each attempt gapless and in order within a partition.
 */
public final class Relay {

  private static final Logger LOG = LoggerFactory.getLogger(Relay.class);
  /** 'tmrelay!': held for as long as this relay is the one that publishes. */
  static final long RELAY_LOCK = 0x746d72656c617921L;

  private static final String BATCH = """
      SELECT k.position, c.id, k.committed_at, c.xid::text AS xid, c.schema_name, c.table_name, c.op, c.key,
             c.before, c.after, c.caller, c.tool, c.idempotency_key, c.plan_id
        FROM tidemark.changelog_commit k
        JOIN tidemark.changelog c ON c.xid = k.xid
       WHERE k.position >= $1 AND (k.position > $1 OR c.id > $2)
       ORDER BY k.position, c.id
       LIMIT $3""";

  private static final String PRUNE = """
      WITH old AS (
        DELETE FROM tidemark.changelog_commit k USING tidemark.changelog_state s
         WHERE k.committed_at < now() - make_interval(secs => $1) AND k.position <= s.published_commit
        RETURNING k.position, k.xid),
      gone AS (
        DELETE FROM tidemark.changelog c USING old WHERE c.xid = old.xid RETURNING old.position, c.id),
      last AS (SELECT position, id FROM gone ORDER BY position DESC, id DESC LIMIT 1)
      UPDATE tidemark.changelog_state s SET pruned_commit = last.position, pruned_change = last.id
        FROM last
       WHERE (last.position, last.id) > (s.pruned_commit, s.pruned_change)
      RETURNING last.position""";

  private final Vertx vertx;
  private final PgConnectOptions connectOptions;
  private final ChangelogConfig config;
  private final Producer<String, String> producer;
  private final String topic;
  private final long sendTimeoutMs;

  private PgConnection conn;
  private byte[] key;
  private ChangePosition published = ChangePosition.START;
  private boolean stopped;
  private boolean pumping;
  private boolean wakeAgain;
  private long pollTimer = -1;
  private long pruneTimer = -1;
  private long retryTimer = -1;
  private volatile boolean active;
  private volatile long publishedCount;

  public Relay(Vertx vertx, PgConnectOptions connectOptions, ChangelogConfig config, Producer<String, String> producer,
      String topic, long sendTimeoutMs) {
    this.vertx = vertx;
    this.connectOptions = connectOptions;
    this.config = config;
    this.producer = producer;
    this.topic = topic;
    this.sendTimeoutMs = sendTimeoutMs;
  }

  /** Starts trying to become the publishing relay; never fails. */
  public void start() {
    attempt();
  }

  /** True while this relay holds the lock and publishes. */
  public boolean active() {
    return active;
  }

  public long publishedCount() {
    return publishedCount;
  }

  public Future<Void> stop() {
    stopped = true;
    vertx.cancelTimer(retryTimer);
    return release();
  }

  private void attempt() {
    if (stopped) {
      return;
    }
    PgConnection.connect(vertx, connectOptions)
        .compose(c -> {
          conn = c;
          return c.preparedQuery("SELECT pg_try_advisory_lock($1)").execute(Tuple.of(RELAY_LOCK));
        })
        .compose(rows -> {
          if (!rows.iterator().next().getBoolean(0)) {
            return release().map(false);
          }
          return takeOver().map(true);
        })
        .onSuccess(leading -> {
          if (!leading) {
            retryLater(config.relayPollMs());
          }
        })
        .onFailure(this::failed);
  }

  private Future<Void> takeOver() {
    PgConnection c = conn;
    c.closeHandler(v -> {
      if (conn == c && !stopped) {
        failed(new IllegalStateException("the relay's PostgreSQL connection closed"));
      }
    });
    c.notificationHandler(n -> pump());
    return c.query("LISTEN tidemark_changelog").execute()
        .compose(x -> c.query("SELECT secret, published_commit, published_change FROM tidemark.changelog_state").execute())
        .map(rows -> {
          Row r = rows.iterator().next();
          key = r.getString("secret").getBytes(StandardCharsets.UTF_8);
          published = new ChangePosition(r.getLong("published_commit"), r.getLong("published_change"));
          active = true;
          LOG.info("this node's relay publishes {} from position {}", topic, published);
          pollTimer = vertx.setPeriodic(config.relayPollMs(), t -> pump());
          pruneTimer = vertx.setPeriodic(config.pruneIntervalSeconds() * 1000, t -> prune());
          pump();
          return null;
        });
  }

  /** Publishes until the changelog is drained; a call while a batch runs asks for one more round. */
  private void pump() {
    if (!active) {
      return;
    }
    if (pumping) {
      wakeAgain = true;
      return;
    }
    pumping = true;
    wakeAgain = false;
    PgConnection c = conn;
    c.preparedQuery(BATCH).execute(Tuple.of(published.commit(), published.change(), config.relayBatchSize()))
        .compose(rows -> publish(toRecords(rows)).compose(last -> last == null
            ? Future.succeededFuture(false)
            : c.preparedQuery("UPDATE tidemark.changelog_state SET published_commit = $1, published_change = $2")
                .execute(Tuple.of(last.position().commit(), last.position().change()))
                .map(x -> {
                  published = last.position();
                  publishedCount += rows.size();
                  return rows.size() == config.relayBatchSize();
                })))
        .onSuccess(full -> {
          pumping = false;
          if (full || wakeAgain) {
            pump();
          }
        })
        .onFailure(err -> {
          pumping = false;
          failed(err);
        });
  }

  private List<ChangelogRecord> toRecords(RowSet<Row> rows) {
    List<ChangelogRecord> records = new ArrayList<>(rows.size());
    for (Row r : rows) {
      ChangePosition position = new ChangePosition(r.getLong("position"), r.getLong("id"));
      JsonObject body = new JsonObject()
          .put("schema", r.getString("schema_name"))
          .put("table", r.getString("table_name"))
          .put("op", r.getString("op"))
          .put("committed_at", r.getOffsetDateTime("committed_at").toString())
          .put("transaction", r.getString("xid"));
      putIfPresent(body, "key", r.getValue("key"));
      putIfPresent(body, "before", r.getValue("before"));
      putIfPresent(body, "after", r.getValue("after"));
      putIfPresent(body, "caller", r.getString("caller"));
      putIfPresent(body, "tool", r.getString("tool"));
      putIfPresent(body, "idempotency_key", r.getString("idempotency_key"));
      putIfPresent(body, "plan_id", r.getString("plan_id"));
      records.add(new ChangelogRecord(position, position.encode(key), body));
    }
    return records;
  }

  private static void putIfPresent(JsonObject json, String field, Object value) {
    if (value != null) {
      json.put(field, value);
    }
  }

  /** Sends a batch and waits for every acknowledgement, on a worker: the producer may block. */
  private Future<ChangelogRecord> publish(List<ChangelogRecord> records) {
    if (records.isEmpty()) {
      return Future.succeededFuture(null);
    }
    return vertx.executeBlocking(() -> {
      List<java.util.concurrent.Future<RecordMetadata>> acks = new ArrayList<>(records.size());
      for (ChangelogRecord record : records) {
        acks.add(producer.send(new ProducerRecord<>(topic, record.kafkaKey(), record.toJson().encode())));
      }
      producer.flush();
      for (var ack : acks) {
        ack.get(sendTimeoutMs, TimeUnit.MILLISECONDS);
      }
      return records.get(records.size() - 1);
    }, true);
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
    LOG.warn("the relay stops publishing and retries in {} ms: {}", config.relayPollMs(), describe(err));
    release().onComplete(x -> retryLater(config.relayPollMs()));
  }

  private void retryLater(long millis) {
    if (!stopped) {
      retryTimer = vertx.setTimer(millis, t -> attempt());
    }
  }

  /** Closing the connection releases the lock, so a standby relay can take over at once. */
  private Future<Void> release() {
    active = false;
    vertx.cancelTimer(pollTimer);
    vertx.cancelTimer(pruneTimer);
    PgConnection c = conn;
    conn = null;
    return c == null ? Future.succeededFuture() : c.close().otherwiseEmpty();
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
