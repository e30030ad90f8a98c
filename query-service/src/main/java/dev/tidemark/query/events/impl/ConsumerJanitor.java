package dev.tidemark.query.events.impl;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Addresses;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.query.events.impl.ConsumerStore.Claimed;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes events consumers nobody uses: every {@code events.consumer-sweep-seconds} each node
 * claims, in PostgreSQL, the consumers unused for {@code events.consumer-idle-seconds} and those an
 * administrator marked ({@code tidemark consumers delete}); rows another node is claiming are
 * skipped, so each consumer is removed by one node. For each, every node closes its share consumers
 * of it and holds its calls ({@link SharePool#forget}); once the share group has no members, the
 * group, the configs Tidemark set on it (the broker keeps those after the group) and the
 * dead-letter topic are deleted on the broker, then the row with its dead letters. A
 * consumer used again while it was being removed is kept. Also marks consumers used
 * ({@link #used}), at most once per {@link #touchEveryMs} per consumer and node.
 */
public final class ConsumerJanitor {

  private static final Logger LOG = LoggerFactory.getLogger(ConsumerJanitor.class);
  /** Consumers one sweep of one node claims at most; the next sweep takes the rest. */
  static final int PER_SWEEP = 50;
  /** Sweeps after which a claim is taken over: the node that made it died half way. */
  static final int STALE_SWEEPS = 5;

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final ConsumerStore store;
  private final GroupAdmin admin;
  private final Map<String, Long> touchedAt = new HashMap<>();
  private long timer = -1;
  private boolean sweeping;

  public ConsumerJanitor(Vertx vertx, NodeInfo node, TidemarkConfig config, ConsumerStore store, GroupAdmin admin) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.store = store;
    this.admin = admin;
  }

  public void start() {
    long every = config.events().consumerSweepSeconds() * 1000L;
    timer = vertx.setPeriodic(every, every, t -> sweep());
  }

  public void stop() {
    vertx.cancelTimer(timer);
  }

  /**
   * How stale a consumer's last use may be in PostgreSQL: a tenth of the idle time, at most a
   * minute, so that marking a busy consumer used costs at most one statement a minute per node.
   */
  long touchEveryMs() {
    long idleMs = config.events().consumerIdleSeconds() * 1000L;
    return idleMs == 0 ? 60_000 : Math.max(100, Math.min(60_000, idleMs / 10));
  }

  /** An events tool call named the consumer of share group {@code group}: it is in use. */
  public void used(String group) {
    long now = System.currentTimeMillis();
    Long last = touchedAt.get(group);
    if (last != null && now - last < touchEveryMs()) {
      return;
    }
    touchedAt.put(group, now);
    if (touchedAt.size() > 10_000) {
      touchedAt.entrySet().removeIf(e -> now - e.getValue() >= touchEveryMs());
    }
    store.touch(group).onFailure(err -> LOG.debug("events: marking {} used failed: {}", group, err.getMessage()));
  }

  /** One sweep: the consumers this node claimed, removed one after another; how many were. */
  public Future<Integer> sweep() {
    if (sweeping) {
      return Future.succeededFuture(0);
    }
    sweeping = true;
    long idle = config.events().consumerIdleSeconds();
    long stale = STALE_SWEEPS * config.events().consumerSweepSeconds() + Seek.EMPTY_WAIT_MS / 1000;
    return store.claim(node.nodeId(), idle, stale, PER_SWEEP)
        .compose(this::removeAll)
        .onFailure(err -> LOG.warn("events: looking for consumers to remove failed: {}", err.getMessage()))
        .onComplete(ar -> sweeping = false);
  }

  private Future<Integer> removeAll(List<Claimed> claimed) {
    Future<Integer> chain = Future.succeededFuture(0);
    for (Claimed c : claimed) {
      chain = chain.compose(n -> remove(c).map(done -> done ? n + 1 : n));
    }
    return chain;
  }

  /** Removes one claimed consumer; false when it was kept (used again) or removing it failed (the next sweep tries again). */
  private Future<Boolean> remove(Claimed c) {
    String control = Addresses.eventsControl(config.database().name());
    long holdMs = Seek.EMPTY_WAIT_MS + 5_000;
    vertx.eventBus().publish(control, new JsonObject().put("group", c.group()).put("action", "forget").put("hold_ms", holdMs));
    String why = c.requested() ? "requested" : "idle";
    return admin.awaitEmpty(c.group(), System.currentTimeMillis() + Seek.EMPTY_WAIT_MS)
        .compose(empty -> empty ? store.stillRemovable(c.group(), node.nodeId(), config.events().consumerIdleSeconds())
            : Future.failedFuture(new IllegalStateException("workers still belong to its share group")))
        .compose(removable -> !removable ? store.unclaim(c.group(), node.nodeId()).map(false)
            : admin.deleteGroup(c.group())
                .compose(x -> admin.deleteConfigs(c.group()))
                .compose(x -> c.deadLetterTopic() == null ? Future.succeededFuture() : admin.deleteTopic(c.deadLetterTopic()))
                .compose(x -> store.removed(c.group(), node.nodeId()))
                .map(removed -> {
                  if (removed) {
                    Meters.of(vertx).events().removed(config.database().name(), why);
                    LOG.info("events: removed consumer {} of {} ({}), its share group {} and dead-letter topic {}", c.name(), c.owner(),
                        c.requested() ? "an administrator deleted it" : "unused for " + config.events().consumerIdleSeconds() + " s",
                        c.group(), c.deadLetterTopic());
                  }
                  return removed;
                }))
        .recover(err -> {
          LOG.warn("events: removing consumer {} ({}) failed, the next sweep tries again: {}", c.name(), c.group(), err.toString());
          return store.unclaim(c.group(), node.nodeId()).map(false).otherwise(false);
        })
        // kept, removed or not: nodes serve its name again (a removed consumer's next call makes a new one)
        .onComplete(ar -> vertx.eventBus().publish(control, new JsonObject().put("group", c.group()).put("action", "resume")));
  }
}
