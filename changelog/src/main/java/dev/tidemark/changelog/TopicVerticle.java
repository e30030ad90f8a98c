package dev.tidemark.changelog;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ServiceHealth;
import dev.tidemark.config.TidemarkConfig;
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
 * The changelog role's topic: at start it connects to Kafka and creates the database's changelog
 * topic when missing; while Kafka is unreachable it keeps trying, and readiness says so. It answers
 * the changelog's health checks on the event bus.
 */
public final class TopicVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(TopicVerticle.class);
  private static final long RETRY_MILLIS = 2_000;

  private final NodeInfo node;
  private final TidemarkConfig config;
  private Admin admin;
  private volatile boolean topicReady;
  private long retryTimer = -1;
  private MessageConsumer<JsonObject> consumer;

  public TopicVerticle(NodeInfo node, TidemarkConfig config) {
    this.node = node;
    this.config = config;
  }

  @Override
  public Future<?> start() {
    Map<String, Object> adminProps = config.kafka().clientProperties();
    adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, "tidemark-changelog-" + node.nodeId() + "-" + config.database().name());
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
        .compose(ignored -> ensureTopic());
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(retryTimer);
    Future<Void> unregister = consumer == null ? Future.succeededFuture() : consumer.unregister();
    return unregister.compose(ignored -> vertx.executeBlocking(() -> {
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
    // a change carries whole row images: the broker's 1 MB default would stop the relay at the first large row
    NewTopic topic = new NewTopic(topic(), config.kafka().topicPartitions(), config.kafka().topicReplicationFactor())
        .configs(java.util.Map.of("max.message.bytes", String.valueOf(RelayVerticle.MAX_RECORD_BYTES)));
    return Future.fromCompletionStage(admin.createTopics(List.of(topic)).all().toCompletionStage(), context)
        .recover(err -> rootCause(err) instanceof TopicExistsException ? Future.succeededFuture() : Future.failedFuture(err))
        .onSuccess(ignored -> {
          topicReady = true;
          LOG.info("changelog topic {} is ready", topic());
        })
        .onFailure(err -> {
          LOG.warn("Kafka at {} (kafka.bootstrap-servers) is not reachable yet ({}); the node is not ready, and tries again in {} ms",
              config.kafka().bootstrapServers(), rootMessage(err), RETRY_MILLIS);
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

  static Throwable rootCause(Throwable err) {
    Throwable t = err;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }

  static String rootMessage(Throwable err) {
    Throwable root = rootCause(err);
    return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
  }

}
