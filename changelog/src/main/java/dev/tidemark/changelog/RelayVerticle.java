package dev.tidemark.changelog;

import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.changelog.impl.Relay;
import dev.tidemark.changelog.impl.SlotReader;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.ChangelogStore;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog's relay for one database: its {@link SlotReader} competes for the database's
 * replication slot, and the node that streams it decodes every committed change into
 * {@code tidemark.changelog} and publishes it to the topic ({@link Relay}). Every node with the
 * changelog role runs one; one publishes, the others stand by. At start it checks that PostgreSQL
 * can run logical decoding, and the node does not start when it cannot. It watches how much WAL
 * the slot holds back, for readiness and {@code status}.
 */
public final class RelayVerticle extends VerticleBase {

  /**
   * The largest change record the relay publishes (and the changelog topic Tidemark creates
   * accepts): a record holds a row's before and after images, and a row of several megabytes is
   * ordinary in a shared database. docs/changelog.md says what a larger one does.
   */
  static final int MAX_RECORD_BYTES = 16 * 1024 * 1024;

  private static final Logger LOG = LoggerFactory.getLogger(RelayVerticle.class);
  static final long LAG_CHECK_MS = 5_000;
  private static final String LAG = """
      SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint AS lag_bytes, wal_status, active
        FROM pg_replication_slots WHERE slot_name = $1""";

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private Relay relay;
  private SlotReader reader;
  private Thread thread;
  private String slot;
  private long lagTimer = -1;
  private volatile Lag lag = new Lag(-1, "unknown", false);
  private boolean overCeiling;

  /** The WAL the slot holds back, its PostgreSQL status, and whether some node streams it. */
  public record Lag(long bytes, String walStatus, boolean streamed) {
    public JsonObject toJson() {
      return new JsonObject().put("lag_bytes", bytes).put("wal_status", walStatus).put("streamed", streamed);
    }
  }

  public RelayVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    Context ctx = context;
    return CaptureSetup.checkPrerequisites(pool)
        .compose(name -> prepareStore().map(name))
        .compose(name -> {
          slot = name;
          // a setting Kafka's client refuses stops the node at start; each tenure of the relay then makes a producer of its own
          return vertx.executeBlocking(() -> {
            createProducer().close(Duration.ZERO);
            return null;
          });
        })
        .map(checked -> {
          String topic = config.kafka().topicFor(config.database().name());
          relay = new Relay(vertx, connectOptions(config.database().changelogDatabase()),
              config.database().separateChangelog() ? connectOptions(config.database()) : null, config.changelog(), this::createProducer, topic,
              2 * config.kafka().requestTimeoutMs(), MAX_RECORD_BYTES, () -> reader.abort());
          TidemarkConfig.DatabaseConfig db = config.database();
          TidemarkConfig.DatabaseConfig store = db.changelogDatabase();
          reader = new SlotReader(jdbcUrl(db), jdbcUrl(store), db.user(), db.password(), db.jdbcSslProperties(), slot,
              CaptureSetup.PUBLICATION, config.changelog().relayBatchSize(), config.changelog().relayPollMs(), new SlotReader.Listener() {
                @Override
                public void tenureStarted() {
                  ctx.runOnContext(v -> relay.tenureStarted());
                }

                @Override
                public void stored() {
                  ctx.runOnContext(v -> relay.wake());
                }

                @Override
                public void tenureEnded(Throwable cause) {
                  ctx.runOnContext(v -> relay.tenureEnded());
                }
              });
          thread = new Thread(reader, "tidemark-slot-" + config.database().name());
          thread.setDaemon(true);
          thread.start();
          lagTimer = vertx.setPeriodic(LAG_CHECK_MS, t -> checkLag());
          return null;
        })
        // readiness knows the slot from the start
        .compose(x -> checkLag());
  }

  /** The changelog's tables in its own database (database.changelog-url), when it has one; tidemark migrate makes them too. */
  private Future<Void> prepareStore() {
    if (!config.database().separateChangelog()) {
      return Future.succeededFuture();
    }
    Pool store = Pools.changelog(vertx, config.database(), pool);
    return ChangelogStore.prepare(store).eventually(() -> Pools.closeChangelog(store, pool));
  }

  /** True while this node's relay is the one publishing. */
  public boolean relayActive() {
    return relay != null && relay.active();
  }

  public Lag lag() {
    return lag;
  }

  /** Up while the slot exists and holds back no more WAL than changelog.max-slot-lag-bytes. */
  public boolean ready() {
    Lag l = lag;
    return l.bytes() >= 0 && l.bytes() <= config.changelog().maxSlotLagBytes() && !"lost".equals(l.walStatus());
  }

  private Future<Void> checkLag() {
    return pool.preparedQuery(LAG).execute(Tuple.of(slot))
        .onSuccess(rows -> {
          if (rows.size() == 0) {
            lag = new Lag(-1, "missing", false);  // the relay creates it anew: docs/changelog.md#when-the-source-of-changes-is-lost-or-reset
            return;
          }
          Row r = rows.iterator().next();
          Long bytes = r.getLong("lag_bytes");
          lag = new Lag(bytes == null ? -1 : bytes, r.getString("wal_status"), Boolean.TRUE.equals(r.getBoolean("active")));
          boolean over = lag.bytes() > config.changelog().maxSlotLagBytes();
          if (over && !overCeiling) {
            LOG.error("the replication slot {} holds back {} bytes of WAL, over changelog.max-slot-lag-bytes ({}): PostgreSQL keeps"
                + " that WAL until the relay has stored it, and the disk fills if it keeps growing; readiness reports the changelog down."
                + " See docs/changelog.md#when-the-slot-falls-behind", slot, lag.bytes(), config.changelog().maxSlotLagBytes());
          } else if (!over && overCeiling) {
            LOG.info("the replication slot {} is back under changelog.max-slot-lag-bytes ({} bytes held)", slot, lag.bytes());
          }
          overCeiling = over;
        })
        .onFailure(err -> lag = new Lag(-1, "unknown", false))
        .<Void>mapEmpty()
        .otherwiseEmpty();
  }

  private Producer<String, String> createProducer() {
    long timeout = config.kafka().requestTimeoutMs();
    Map<String, Object> props = config.kafka().clientProperties();
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "tidemark-relay-" + node.nodeId() + "-" + config.database().name());
    // the broker then refuses a gap or a reordering within one producer session
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout);
    // never give a batch up: the relay ends the attempt at its own deadline (Relay.handOver says why)
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Integer.MAX_VALUE);
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
    // the relay does not flush: a record goes out as soon as the connection has room, and records
    // handed over while five requests are in flight travel together; a batch of the relay (up
    // to changelog.relay-batch-size records) then fits in one or two requests, not dozens
    props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, MAX_RECORD_BYTES);
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    return new KafkaProducer<>(props);
  }

  private static String jdbcUrl(TidemarkConfig.DatabaseConfig db) {
    return "jdbc:postgresql://" + db.host() + ":" + db.port() + "/" + db.dbname();
  }

  static PgConnectOptions connectOptions(TidemarkConfig.DatabaseConfig db) {
    return db.connectOptions(db.user(), db.password(), "tidemark-relay");
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(lagTimer);
    if (reader != null) {
      reader.stop();
    }
    Future<Void> relayStopped = relay == null ? Future.succeededFuture() : relay.stop();
    return relayStopped.compose(ignored -> vertx.executeBlocking(() -> {
      if (thread != null) {
        thread.join(5_000);
      }
      return null;
    }));
  }
}
