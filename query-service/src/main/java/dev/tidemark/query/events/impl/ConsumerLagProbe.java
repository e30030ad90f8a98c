package dev.tidemark.query.events.impl;

import dev.tidemark.telemetry.metrics.Meters;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsResult;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures, every {@link #PERIOD_MS}, the lag of every events consumer of one database (one
 * statement for the groups, one broker request for their positions) into
 * {@code tidemark_events_consumer_lag}, and how many there are into {@code tidemark_events_consumers}: every node with the query role measures them all, so a
 * consumer whose workers are all gone still shows its lag rising.
 */
public final class ConsumerLagProbe {

  static final long PERIOD_MS = 15_000;
  private static final Logger LOG = LoggerFactory.getLogger(ConsumerLagProbe.class);

  private final Vertx vertx;
  private final ConsumerStore store;
  private final GroupAdmin admin;
  private long timer = -1;
  private boolean measuring;

  public ConsumerLagProbe(Vertx vertx, ConsumerStore store, GroupAdmin admin) {
    this.vertx = vertx;
    this.store = store;
    this.admin = admin;
  }

  public void start() {
    timer = vertx.setPeriodic(1_000, PERIOD_MS, t -> measure());
  }

  public void stop() {
    vertx.cancelTimer(timer);
  }

  /** Completes with each consumer's lag, as reported to the gauges; a measure still running is not doubled. */
  public Future<Map<String, Long>> measure() {
    if (measuring) {
      return Future.succeededFuture(Map.of());
    }
    measuring = true;
    return store.groups()
        .onSuccess(groups -> Meters.of(vertx).events().consumers(store.database(), groups.size()))
        .compose(groups -> groups.isEmpty() ? Future.succeededFuture(Map.<String, Long>of()) : lags(groups))
        .onSuccess(lags -> Meters.of(vertx).eventsLag().report(store.database(), lags))
        .onFailure(err -> LOG.debug("cannot measure the events consumers' lag: {}", err.getMessage()))
        .onComplete(ar -> measuring = false);
  }

  private Future<Map<String, Long>> lags(List<String> groups) {
    return admin.partitions().compose(tps -> {
      Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
      groups.forEach(g -> specs.put(g, new ListShareGroupOffsetsSpec().topicPartitions(tps)));
      ListShareGroupOffsetsResult result = admin.client().listShareGroupOffsets(specs);
      Map<String, Long> out = new HashMap<>();
      Future<Void> all = Future.succeededFuture();
      for (String g : groups) {
        all = all.compose(x -> admin.kafka(result.partitionsToOffsetInfo(g))
            .map(infos -> {
              out.put(g, GroupAdmin.lag(infos));
              return (Void) null;
            })
            // a group that never read has no position yet: it shows no gauge until it has one
            .otherwise((Void) null));
      }
      return all.map(x -> out);
    });
  }
}
