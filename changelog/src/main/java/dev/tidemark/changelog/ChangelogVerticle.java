package dev.tidemark.changelog;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.changelog.impl.Relay;
import dev.tidemark.config.TidemarkConfig;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.StringSerializer;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changelog role for one database. At start it connects to Kafka and creates the database's
 * changelog topic when missing; while Kafka is unreachable it keeps trying, and readiness says so.
 * It puts capture triggers on the served schemas' tables (and again every
 * {@code changelog.reconcile-seconds}), and runs a {@link Relay} that publishes the changelog
 * table to the topic whenever it holds the relay lock.
 */
public final class ChangelogVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(ChangelogVerticle.class);
  private static final long RETRY_MILLIS = 2_000;

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private Admin admin;
  private Producer<String, String> producer;
  private Relay relay;
  private long reconcileTimer = -1;
  private volatile boolean topicReady;
  private long retryTimer = -1;
  private MessageConsumer<JsonObject> consumer;

  public ChangelogVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    Map<String, Object> adminProps = config.kafka().clientProperties();
    adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, "tidemark-changelog-" + node.nodeId());
    adminProps.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) config.kafka().requestTimeoutMs());
    adminProps.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) config.kafka().requestTimeoutMs());
    return vertx.executeBlocking(() -> Admin.create(adminProps))
        .compose(created -> {
          admin = created;
          consumer = vertx.eventBus().consumer(Addresses.changelog(config.database().name()), this::onMessage);
          return consumer.completion();
        })
        // the first attempt is part of starting, so a node whose broker is up starts ready;
        // a failed attempt does not fail the start: the role keeps trying and readiness says so
        .compose(ignored -> ensureTopic())
        .compose(ignored -> vertx.executeBlocking(this::createProducer))
        .compose(created -> {
          producer = created;
          relay = new Relay(vertx, connectOptions(config.database()), config.changelog(), producer, topic());
          relay.start();
          reconcileTimer = vertx.setPeriodic(config.changelog().reconcileSeconds() * 1000, t -> reconcile());
          // capture starts with the role; a database that is down now is reconciled on the next round
          return reconcile();
        });
  }

  /** True while this node's relay is the one publishing. */
  public boolean relayActive() {
    return relay != null && relay.active();
  }

  /** Puts capture triggers on every table of database.schemas, and takes them off tables that left. */
  private Future<Void> reconcile() {
    return pool.preparedQuery("SELECT tidemark.capture_schemas($1)")
        .execute(Tuple.of(config.database().schemas().toArray(new String[0])))
        .onSuccess(rows -> {
          int touched = rows.iterator().next().getInteger(0);
          if (touched > 0) {
            LOG.info("capture triggers changed on {} table(s)", touched);
          }
        })
        .onFailure(err -> LOG.warn("could not reconcile capture triggers: {}", rootMessage(err)))
        .<Void>mapEmpty()
        .otherwiseEmpty();
  }

  private Producer<String, String> createProducer() {
    long timeout = config.kafka().requestTimeoutMs();
    Map<String, Object> props = config.kafka().clientProperties();
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "tidemark-relay-" + node.nodeId());
    // the broker then refuses a gap or a reordering within one producer session
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 5);
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) timeout);
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) (timeout * 2));
    props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
    // the relay does not flush: a record goes out as soon as the connection has room, and records
    // handed over while five requests are in flight travel together; a batch of the relay (up
    // to changelog.relay-batch-size records) then fits in one or two requests, not dozens
    props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
    return new KafkaProducer<>(props);
  }

  static PgConnectOptions connectOptions(TidemarkConfig.DatabaseConfig db) {
    return db.connectOptions(db.user(), db.password(), "tidemark-relay");
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(retryTimer);
    vertx.cancelTimer(reconcileTimer);
    Future<Void> unregister = consumer == null ? Future.succeededFuture() : consumer.unregister();
    Future<Void> relayStopped = relay == null ? Future.succeededFuture() : relay.stop();
    return Future.all(unregister, relayStopped).compose(ignored -> vertx.executeBlocking(() -> {
      if (producer != null) {
        producer.close(Duration.ofSeconds(2));
      }
      if (admin != null) {
        admin.close(Duration.ofSeconds(2));
      }
      return null;
    }));
  }

  /** The topic this role publishes the database's changes to. */
  public String topic() {
    return config.kafka().topicFor(config.database().name());
  }

  /** True once the topic exists and the broker answers now. */
  public Future<Boolean> ready() {
    if (!topicReady) {
      return Future.succeededFuture(false);
    }
    return kafkaReachable().map(ServiceHealth::up);
  }

  private Future<ServiceHealth> kafkaReachable() {
    var options = new DescribeClusterOptions().timeoutMs((int) config.kafka().requestTimeoutMs());
    return Future.fromCompletionStage(admin.describeCluster(options).clusterId().toCompletionStage(), context)
        .map(id -> new ServiceHealth(node.nodeId(), true, null))
        .otherwise(err -> new ServiceHealth(node.nodeId(), false, "Kafka: " + rootMessage(err)));
  }

  private Future<Void> ensureTopic() {
    NewTopic topic = new NewTopic(topic(), config.kafka().topicPartitions(), config.kafka().topicReplicationFactor());
    return Future.fromCompletionStage(admin.createTopics(List.of(topic)).all().toCompletionStage(), context)
        .recover(err -> rootCause(err) instanceof TopicExistsException ? Future.succeededFuture() : Future.failedFuture(err))
        .onSuccess(ignored -> {
          topicReady = true;
          LOG.info("changelog topic {} is ready", topic());
        })
        .onFailure(err -> {
          LOG.warn("Kafka is not reachable yet ({}); retrying in {} ms", rootMessage(err), RETRY_MILLIS);
          retryTimer = vertx.setTimer(RETRY_MILLIS, t -> ensureTopic());
        })
        .otherwiseEmpty();
  }

  private void onMessage(Message<JsonObject> msg) {
    if (Actions.HEALTH.equals(msg.headers().get(Addresses.ACTION_HEADER))) {
      kafkaReachable().onSuccess(h -> msg.reply(h.toJson()));
    } else {
      msg.fail(400, "unknown action " + msg.headers().get(Addresses.ACTION_HEADER));
    }
  }

  private static Throwable rootCause(Throwable err) {
    Throwable t = err;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  private static String rootMessage(Throwable err) {
    Throwable root = rootCause(err);
    return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
  }

}
