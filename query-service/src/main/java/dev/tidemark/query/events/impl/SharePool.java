package dev.tidemark.query.events.impl;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Addresses;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This node's share consumers, up to {@code events.consumers-per-node} per consumer, each holding
 * one batch at a time; the holds events_seek and the removal of a consumer put on groups
 * ({@link #onControl}); and the count of events leased here, reported to the cluster map that
 * events_status sums. A share consumer costs two threads (its own, and the Kafka client's network
 * thread), a broker connection and a place in its group, so one idle for {@code
 * events.worker-idle-seconds} is closed. Used on the verticle's context only.
 */
public final class SharePool {

  private static final Logger LOG = LoggerFactory.getLogger(SharePool.class);

  private final Vertx vertx;
  private final Context context;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final String topic;
  private final Map<String, Group> groups = new HashMap<>();
  /** Until when events_seek holds each share group (by id), known to this node or not. */
  private final Map<String, Long> holds = new HashMap<>();
  private final AtomicLong slotIds = new AtomicLong();
  private final String incarnation = Long.toHexString(System.nanoTime() & 0xffffffL);

  public SharePool(Context context, NodeInfo node, TidemarkConfig config) {
    this.vertx = context.owner();
    this.context = context;
    this.node = node;
    this.config = config;
    this.topic = config.kafka().topicFor(config.database().name());
  }

  /** The group of a consumer this node served, or null. */
  Group group(String groupId) {
    return groups.get(groupId);
  }

  Group groupOf(Consumer c) {
    return groups.computeIfAbsent(c.group(), g -> new Group(c));
  }

  boolean held(String groupId) {
    return holds.getOrDefault(groupId, 0L) > System.currentTimeMillis();
  }

  /** Holds the group until {@code untilMs}, ending every lease of it here: Kafka moves only an empty group. */
  void hold(String groupId, long untilMs) {
    holds.put(groupId, untilMs);
    Group group = groups.get(groupId);
    if (group != null) {
      new ArrayList<>(group.slots).forEach(s -> retire(group, s));
    }
  }

  /** Serves the group again; {@code deliversFrom} null: the consumer's start is unchanged. */
  void resume(String groupId, Instant deliversFrom, boolean moved) {
    holds.remove(groupId);
    Group group = groups.get(groupId);
    if (group != null && moved) {
      group.deliversFrom = deliversFrom;
    }
  }

  /**
   * An idle share consumer of the group taking batches of {@code max}, made when there is room; null
   * when all hold leases; UNAVAILABLE when the consumer's owner holds its cap of them here ({@link #makeRoomFor}).
   */
  ShareSlot slot(Group group, int max) {
    group.slots.removeIf(ShareSlot::closed);
    ShareSlot other = null;
    for (ShareSlot s : group.slots) {
      if (!s.busy && s.lease == null) {
        if (s.maxRecords == max) {
          return s;
        }
        other = s;
      }
    }
    if (group.slots.size() >= config.events().consumersPerNode()) {
      if (other == null) {
        return null;
      }
      retire(group, other);  // it took batches of another size: every record it takes is locked, so its size must be the call's
    } else {
      makeRoomFor(group.consumer.owner());
    }
    Map<String, Object> props = config.kafka().clientProperties();
    props.put("group.id", group.consumer.group());
    String id = incarnation + "." + slotIds.incrementAndGet();
    props.put("client.id", "tidemark-events-" + node.nodeId() + "-" + id);
    props.put("request.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("default.api.timeout.ms", (int) config.kafka().requestTimeoutMs());
    ShareSlot slot = new ShareSlot(id, context, props, topic, max);
    group.slots.add(slot);
    counted();
    return slot;
  }

  /**
   * Keeps the share consumers one caller holds open on this node, over all its consumers, under
   * {@code events.max-workers-per-caller}: at the cap, the caller's share consumer idle longest
   * closes to make room; when every one holds a lease or serves a call, UNAVAILABLE naming the cap
   * and when the first of those leases ends. So one caller's many consumers cannot take every
   * thread of a node from the others.
   */
  private void makeRoomFor(String owner) {
    int cap = config.events().maxWorkersPerCaller();
    List<Group> own = groups.values().stream().filter(g -> g.consumer.owner().equals(owner)).toList();
    if (own.stream().mapToInt(g -> g.slots.size()).sum() < cap) {
      return;
    }
    Group idleGroup = null;
    ShareSlot idlest = null;
    long soonestEnd = Long.MAX_VALUE;
    for (Group g : own) {
      for (ShareSlot s : g.slots) {
        if (!s.busy && s.lease == null && (idlest == null || s.idleSinceMs < idlest.idleSinceMs)) {
          idlest = s;
          idleGroup = g;
        }
        if (s.lease != null) {
          soonestEnd = Math.min(soonestEnd, s.lease.expiresAtMs);
        }
      }
    }
    if (idlest == null) {
      throw EventErrors.workers(cap, soonestEnd == Long.MAX_VALUE ? 0 : soonestEnd - System.currentTimeMillis());
    }
    retire(idleGroup, idlest);
  }

  /** The group's share consumer {@code slotId} on this node, or null. */
  ShareSlot find(Group group, String slotId) {
    return group == null ? null : group.slots.stream().filter(s -> s.id.equals(slotId)).findFirst().orElse(null);
  }

  /** How long a share consumer may serve nobody before {@link #closeIdle} closes it. */
  public long idleMs() {
    return config.events().workerIdleSeconds() * 1000L;
  }

  /** Closes share consumers nobody used for {@link #idleMs}. */
  public void closeIdle() {
    long now = System.currentTimeMillis();
    for (Group group : groups.values()) {
      new ArrayList<>(group.slots).stream().filter(s -> !s.busy && s.lease == null && now - s.idleSinceMs > idleMs())
          .forEach(s -> retire(group, s));
    }
  }

  /** Share consumers open on this node, of every consumer. */
  public int open() {
    return groups.values().stream().mapToInt(g -> g.slots.size()).sum();
  }

  /** Reports the share consumers open here to the node's gauge, after each change. */
  private void counted() {
    Meters.of(vertx).events().shareConsumers(config.database().name(), open());
  }

  /** Share consumers open on this node for share group {@code groupId}. */
  int openFor(String groupId) {
    Group group = groups.get(groupId);
    return group == null ? 0 : group.slots.size();
  }

  /**
   * Forgets the consumer of the group, which is being removed: its share consumers close, and it
   * is held until {@code untilMs}, so that a call of it here waits for the removal instead of
   * joining the group again; a later call finds no consumer and makes a new one.
   */
  void forget(String groupId, long untilMs) {
    hold(groupId, untilMs);
    groups.remove(groupId);
  }

  /** A hold, resume or forget published on the control address by a seek or a removal on any node. */
  public void onControl(Message<JsonObject> msg) {
    JsonObject body = msg.body();
    String id = body.getString("group", "");
    long until = System.currentTimeMillis() + body.getLong("hold_ms", Seek.EMPTY_WAIT_MS);
    switch (body.getString("action", "")) {
      case "hold" -> hold(id, until);
      case "forget" -> forget(id, until);
      case "resume" -> {
        String from = body.getString("delivers_from");
        resume(id, from == null ? null : Instant.parse(from), body.containsKey("delivers_from"));
      }
      default -> LOG.debug("events: an unknown control action {}", body.getString("action"));
    }
  }

  /** Closes the share consumer: every record it still holds goes back to the broker. */
  void retire(Group group, ShareSlot slot) {
    group.slots.remove(slot);
    if (slot.lease != null && slot.lease.timer >= 0) {
      vertx.cancelTimer(slot.lease.timer);
    }
    slot.lease = null;
    slot.close();
    counted();
    reportLeased(group);
  }

  /** Closes every share consumer, for another node's workers to get what they held. */
  public List<Future<?>> closeAll() {
    List<Future<?>> closing = new ArrayList<>();
    groups.values().forEach(g -> g.slots.forEach(s -> closing.add(s.close())));
    groups.clear();
    counted();
    return closing;
  }

  /** Events this node leases now for the group, in the cluster map that events_status reads; an entry lives as long as a lease. */
  void reportLeased(Group group) {
    int n = 0;
    for (ShareSlot s : group.slots) {
      if (s.lease != null) {
        n += s.lease.records.size() - s.lease.resolved.size();
      }
    }
    int leased = n;
    vertx.sharedData().<String, Integer>getAsyncMap(Addresses.EVENTS_LEASED_MAP)
        .compose(m -> m.put(group.consumer.group() + "|" + node.nodeId(), leased, group.consumer.leaseSeconds() * 1000L + 1000))
        .onFailure(err -> LOG.debug("events: reporting leases failed: {}", err.getMessage()));
  }

  /** Events leased now for the group, summed over the nodes' reports. */
  Future<Integer> leasedInCluster(String groupId) {
    return vertx.sharedData().<String, Integer>getAsyncMap(Addresses.EVENTS_LEASED_MAP).compose(m -> m.entries())
        .map(entries -> entries.entrySet().stream().filter(e -> e.getKey().startsWith(groupId + "|"))
            .mapToInt(e -> e.getValue() == null ? 0 : e.getValue()).sum())
        .otherwise(0);
  }
}
