package dev.tidemark.query.events;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.tracing.Traces;
import dev.tidemark.query.CallerPools;
import dev.tidemark.query.KeyRingSource;
import dev.tidemark.query.ToolMessages;
import dev.tidemark.query.events.impl.ConsumerStore;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import dev.tidemark.query.events.impl.ShareSlot;
import dev.tidemark.query.impl.ChangesSinceTool;
import io.opentelemetry.api.trace.Tracer;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events tools of one database on one node with the query role: durable consumers over Kafka
 * share groups, one group per consumer. The broker's acquisition locks are the leases; this node
 * keeps up to {@code events.consumers-per-node} share consumers per consumer ({@link ShareSlot}),
 * each holding one batch at a time, and names the node, the share consumer and the batch in each
 * lease token, sealed with the key ring for the caller. next, status and seek come to the cluster
 * address ({@link Addresses#events}); an ack or nack is forwarded from there to the node that
 * holds its lease ({@link Addresses#eventsNode}).
 */
public final class EventsVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(EventsVerticle.class);
  private static final String LEASE_PURPOSE = "events-lease";
  /** How long a seek waits for the consumer's share consumers on every node to leave its group. */
  static final long SEEK_EMPTY_WAIT_MS = 10_000;
  /** A share consumer idle this long is closed: it holds a connection and a place in its group. */
  static final long IDLE_MS = 60_000;
  /** Taken off each lease, so that an ack accepted here still finds the broker's lock. */
  private static final long LEASE_MARGIN_MS = 250;

  /** This node's share consumers of one consumer (share group). */
  private static final class Group {
    final Consumer consumer;
    final List<ShareSlot> slots = new ArrayList<>();
    volatile Instant deliversFrom;  // read by the share consumers' threads

    Group(Consumer consumer) {
      this.consumer = consumer;
      this.deliversFrom = consumer.deliversFrom();
    }
  }

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private final String topic;
  private final Map<String, Group> groups = new HashMap<>();
  /** Until when events_seek holds each share group (by id), known to this node or not. */
  private final Map<String, Long> holds = new HashMap<>();
  private final AtomicLong slotIds = new AtomicLong();
  private final String incarnation = Long.toHexString(System.nanoTime() & 0xffffffL);
  private KeyRingSource keys;
  private CallerPools callers;
  private ChangesSinceTool changes;
  private ConsumerStore store;
  private Admin admin;
  private Tracer tracer;
  private final List<MessageConsumer<JsonObject>> consumers = new ArrayList<>();

  /** @param pool Tidemark's login: consumers, dead letters and the key ring */
  public EventsVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.topic = config.kafka().topicFor(config.database().name());
  }

  @Override
  public Future<?> start() {
    String db = config.database().name();
    tracer = Traces.tracer(vertx);
    store = new ConsumerStore(pool, db);
    changes = new ChangesSinceTool(config.database(), pool);
    Map<String, Object> props = config.kafka().clientProperties();
    props.put("request.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("default.api.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("client.id", "tidemark-events-admin-" + node.nodeId());
    admin = Admin.create(props);
    return KeyRingSource.start(vertx, pool, config.keysRefreshSeconds()).compose(k -> {
      keys = k;
      callers = new CallerPools(vertx, config.database(), k, false);
      consumers.add(vertx.eventBus().consumer(Addresses.events(db),
          msg -> ToolMessages.answer(msg, node, pool, tracer, this::run, LOG)));
      consumers.add(vertx.eventBus().consumer(Addresses.eventsNode(db, node.nodeId()),
          msg -> ToolMessages.answer(msg, node, pool, tracer, this::resolveHere, LOG)));
      consumers.add(vertx.eventBus().consumer(Addresses.eventsControl(db), this::onControl));
      vertx.setPeriodic(IDLE_MS / 2, t -> closeIdle());
      return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
    });
  }

  @Override
  public Future<?> stop() {
    List<Future<?>> closing = new ArrayList<>();
    consumers.forEach(c -> closing.add(c.unregister()));
    // every record a share consumer holds goes back to the broker, for another node's workers
    groups.values().forEach(g -> g.slots.forEach(s -> closing.add(s.close())));
    groups.clear();
    return Future.join(closing).eventually(() -> {
      Admin a = admin;
      return vertx.executeBlocking(() -> {
        a.close(java.time.Duration.ofSeconds(2));
        return null;
      }).compose(x -> callers == null ? Future.succeededFuture() : callers.close());
    });
  }

  private Future<ToolReply> run(ToolRequest request) {
    return switch (request.tool()) {
      case ToolCatalog.EVENTS_NEXT -> next(request);
      case ToolCatalog.EVENTS_ACK, ToolCatalog.EVENTS_NACK -> route(request);
      case ToolCatalog.EVENTS_STATUS -> status(request);
      case ToolCatalog.EVENTS_SEEK -> seek(request);
      default -> Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no events tool named " + request.tool() + "."));
    };
  }

  // ---- events_next

  private Future<ToolReply> next(ToolRequest request) {
    JsonObject args = request.arguments();
    String name = args.getString("consumer");
    List<String> tables = new ArrayList<>(new TreeSet<>(args.getJsonArray("tables").stream().map(String::valueOf).toList()));
    int lease = args.getInteger("lease_seconds", 30);
    int max = args.getInteger("max", 10);
    long waitMs = args.getLong("wait_ms", 1000L);
    long deadline = System.currentTimeMillis() + waitMs;
    return consumer(request.caller(), name, tables, lease).compose(found -> {
      Consumer c = found.consumer();
      if (!c.tables().equals(tables) || c.leaseSeconds() != lease) {
        return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "Consumer " + name + " was created with tables "
            + c.tables() + " and lease_seconds " + c.leaseSeconds() + "; call it with those, or use another consumer name.",
            new JsonObject().put("argument", c.tables().equals(tables) ? "lease_seconds" : "tables")));
      }
      Group group = groups.computeIfAbsent(c.group(), g -> new Group(c));
      return lease(request, group, max, deadline).map(events -> reply(events, found.created()));
    });
  }

  private ToolReply reply(JsonObject out, boolean created) {
    out.put("created", created);
    int n = out.getJsonArray("events").size();
    return ToolReply.ok("events_next: " + n + (n == 1 ? " event" : " events") + (created ? " (consumer created)" : ""), out);
  }

  /** The caller's consumer {@code name}, created when it does not exist yet (its group configured before anyone joins it). */
  private Future<ConsumerStore.Created> consumer(Caller caller, String name, List<String> tables, int leaseSeconds) {
    Group known = groups.get(store.groupId(caller.id(), name));
    if (known != null) {
      return Future.succeededFuture(new ConsumerStore.Created(known.consumer, false));
    }
    return store.find(caller.id(), name).compose(found -> {
      if (found.isPresent()) {
        // configured again on each node's first use: a creator that died before it configured the group leaves it right
        return configure(found.get(), false).map(x -> new ConsumerStore.Created(found.get(), false));
      }
      Consumer wanted = new Consumer(caller.id(), name, store.groupId(caller.id(), name), tables, leaseSeconds, null, null, 0, 0,
          null, 0);
      // the topic's end before the consumer's creation time is taken: every change committed after
      // that time lies past it, so the group may start there instead of reading the whole topic
      Future<Map<TopicPartition, Long>> ends = configure(wanted, true)
          .compose(x -> partitions().compose(tps -> offsets(tps, OffsetSpec.latest())).otherwise(Map.of()));
      return ends.compose(end -> deadLetterTopic(wanted.group())
          .compose(dlq -> store.create(caller.id(), name, tables, leaseSeconds, dlq)).compose(created -> {
            Future<Void> started = !created.created() || end.isEmpty() ? Future.succeededFuture()
                : kafka(admin.alterShareGroupOffsets(created.consumer().group(), end).all()).otherwise(err -> {
                  LOG.debug("events: consumer {} starts at the topic's oldest record: {}", name, err.toString());
                  return null;
                });
            return started.compose(x -> configure(created.consumer(), false)).map(created);
          }));
    });
  }

  /**
   * The broker's dead-letter topic for a new group, created here: its name under the broker's
   * {@code errors.deadletterqueue.topic.name.prefix}, with {@code errors.deadletterqueue.group.enable};
   * null when the broker has no dead-letter support (share.version below 2), it is turned off, or
   * the topic cannot be made, and Tidemark dead-letters itself.
   */
  private Future<String> deadLetterTopic(String group) {
    if (!config.events().brokerDeadLetters()) {
      return Future.succeededFuture(null);
    }
    return kafka(admin.describeFeatures().featureMetadata()).compose(features -> {
      var share = features.finalizedFeatures().get("share.version");
      if (share == null || share.maxVersionLevel() < 2) {
        return Future.succeededFuture((String) null);
      }
      return kafka(admin.describeCluster().nodes()).compose(nodes -> {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, String.valueOf(nodes.iterator().next().id()));
        return kafka(admin.describeConfigs(List.of(broker)).all());
      }).compose(configs -> {
        ConfigEntry prefix = configs.values().iterator().next().get("errors.deadletterqueue.topic.name.prefix");
        String topicName = (prefix == null || prefix.value() == null ? "dlq." : prefix.value()) + group;
        NewTopic dlq = new NewTopic(topicName, 1, config.kafka().topicReplicationFactor())
            .configs(Map.of("errors.deadletterqueue.group.enable", "true", "max.message.bytes", "16777216"));
        return kafka(admin.createTopics(List.of(dlq)).all()).map(topicName)
            .recover(err -> err instanceof TopicExistsException ? Future.succeededFuture(topicName) : Future.failedFuture(err));
      });
    }).otherwise(err -> {
      LOG.info("events: the broker's dead-letter topic could not be used for {}, Tidemark dead-letters itself: {}", group, err.toString());
      return null;
    });
  }

  /** Copies what the broker wrote to the group's dead-letter topic since the last copy into tidemark.event_dead_letter. */
  private Future<Void> copyDeadLetters(Consumer known) {
    if (known.deadLetterTopic() == null) {
      return Future.succeededFuture();
    }
    return store.find(known.owner(), known.name()).compose(found -> {
      Consumer c = found.orElse(known);
      Map<String, Object> props = config.kafka().clientProperties();
      props.put("key.deserializer", StringDeserializer.class);
      props.put("value.deserializer", StringDeserializer.class);
      props.put("enable.auto.commit", false);
      props.put("client.id", "tidemark-events-dlq-" + node.nodeId());
      return vertx.executeBlocking(() -> {
        TopicPartition tp = new TopicPartition(c.deadLetterTopic(), 0);
        JsonArray letters = new JsonArray();
        try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(props)) {
          reader.assign(List.of(tp));
          reader.seek(tp, c.deadLetterOffset());
          long end = reader.endOffsets(List.of(tp)).get(tp);
          long deadline = System.currentTimeMillis() + config.kafka().requestTimeoutMs();
          while (reader.position(tp) < end && System.currentTimeMillis() < deadline) {
            for (ConsumerRecord<String, String> r : reader.poll(java.time.Duration.ofMillis(200))) {
              JsonObject body = new JsonObject(r.value());
              letters.add(new JsonObject().put("partition", Integer.parseInt(header(r, "__dlq.errors.partition", "0")))
                  .put("offset", Long.parseLong(header(r, "__dlq.errors.offset", "0"))).put("event_id", eventId(body))
                  .put("delivery_count", Integer.parseInt(header(r, "__dlq.errors.delivery.count", "0"))).put("record", body));
            }
          }
          return new Object[] {letters, reader.position(tp)};
        }
      }).compose(read -> store.copiedDeadLetters(c.group(), (JsonArray) read[0], (Long) read[1]));
    }).recover(err -> Future.failedFuture(unavailable("Tidemark could not read the consumer's dead-letter topic: " + err.getMessage())));
  }

  private static String header(ConsumerRecord<String, String> r, String name, String otherwise) {
    var h = r.headers().lastHeader(name);
    return h == null ? otherwise : new String(h.value(), StandardCharsets.UTF_8);
  }

  /**
   * Sets the share group's configs: its lock is the lease, its delivery limit one above
   * {@code events.max-deliveries} (the delivery past Tidemark's limit is the one it dead-letters),
   * and a group that never had a position starts at the oldest record, from which the consumer's
   * creation time filters what came before it (so nothing committed after creation is missed,
   * however late the first poll). {@code validateOnly}: only ask the broker whether it would take them.
   */
  private Future<Void> configure(Consumer c, boolean validateOnly) {
    ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, c.group());
    List<AlterConfigOp> ops = List.of(
        new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("share.record.lock.duration.ms", String.valueOf(c.leaseSeconds() * 1000L)), AlterConfigOp.OpType.SET),
        // with the broker's dead-letter topic the broker dead-letters at the limit; else the delivery
        // past Tidemark's limit reaches Tidemark, which dead-letters it
        new AlterConfigOp(new ConfigEntry("share.delivery.count.limit",
            String.valueOf(config.events().maxDeliveries() + (c.deadLetterTopic() == null ? 1 : 0))), AlterConfigOp.OpType.SET));
    if (c.deadLetterTopic() != null) {
      ops = new ArrayList<>(ops);
      ops.add(new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.topic.name", c.deadLetterTopic()), AlterConfigOp.OpType.SET));
      ops.add(new AlterConfigOp(new ConfigEntry("errors.deadletterqueue.copy.record.enable", "true"), AlterConfigOp.OpType.SET));
    }
    return kafka(admin.incrementalAlterConfigs(Map.of(resource, ops), new AlterConfigsOptions().validateOnly(validateOnly)).all())
        .recover(err -> Future.failedFuture(err instanceof InvalidConfigurationException || err instanceof InvalidRequestException
            ? new ToolException(ErrorCode.INVALID_ARGUMENTS, "The broker refuses lease_seconds " + c.leaseSeconds() + ": " + err.getMessage()
                + " Use a lease within the broker's group.share.min.record.lock.duration.ms and group.share.max.record.lock.duration.ms"
                + " (15 to 60 seconds unless the operator changed them).", new JsonObject().put("argument", "lease_seconds"))
            : unavailable("Kafka did not take the consumer's settings: " + err.getMessage())));
  }

  private Future<JsonObject> lease(ToolRequest request, Group group, int max, long deadline) {
    long now = System.currentTimeMillis();
    if (holds.getOrDefault(group.consumer.group(), 0L) > now) {
      return Future.failedFuture(unavailable("events_seek is moving consumer " + group.consumer.name() + "; call again in a few seconds."));
    }
    ShareSlot slot = slot(group, max);
    if (slot == null) {
      return Future.failedFuture(unavailable("This node's " + config.events().consumersPerNode() + " share consumers of consumer "
          + group.consumer.name() + " all hold leases; acknowledge events, or call again when a lease ended."));
    }
    slot.busy = true;
    int maxDeliveries = config.events().maxDeliveries();
    return slot.poll(Math.max(0, deadline - now), r -> skipped(group, r)).compose(records -> {
      long polledAt = System.currentTimeMillis();
      if (slot.closed()) {
        return Future.succeededFuture(new JsonObject().put("events", new JsonArray()));
      }
      Map<String, List<ConsumerRecord<String, String>>> byEvent = new LinkedHashMap<>();
      Map<String, JsonObject> bodies = new HashMap<>();
      List<ConsumerRecord<String, String>> accept = new ArrayList<>();
      JsonArray dead = new JsonArray();
      for (ConsumerRecord<String, String> r : records) {
        JsonObject body = new JsonObject(r.value());
        String id = eventId(body);
        int count = r.deliveryCount().map(Short::intValue).orElse(1);
        if (count > maxDeliveries) {
          dead.add(new JsonObject().put("partition", r.partition()).put("offset", r.offset()).put("event_id", id)
              .put("delivery_count", count).put("record", body));
          accept.add(r);
          continue;
        }
        byEvent.computeIfAbsent(id, x -> new ArrayList<>()).add(r);
        bodies.putIfAbsent(id, body);
      }
      Future<Void> buried = dead.isEmpty() ? Future.succeededFuture() : store.deadLetter(group.consumer.group(), dead);
      JsonArray shown = new JsonArray();
      bodies.values().forEach(shown::add);
      return buried
          .compose(x -> shown.isEmpty() ? Future.succeededFuture(Map.<Long, JsonObject>of())
              : changes.show(callers.forCaller(request.caller()), request, shown))
          .compose(visible -> {
            Map<String, List<ConsumerRecord<String, String>>> leased = new LinkedHashMap<>();
            byEvent.forEach((id, recs) -> {
              if (visible.containsKey(bodies.get(id).getJsonObject("position").getLong("change"))) {
                leased.put(id, recs);
              } else {
                accept.addAll(recs);  // a change the caller may not see is finished for it, never shown
              }
            });
            if (leased.isEmpty()) {
              Future<?> finished = accept.isEmpty() ? Future.succeededFuture() : slot.acknowledge(accept, AcknowledgeType.ACCEPT);
              return finished.compose(failed -> {
                slot.busy = false;
                slot.idleSinceMs = System.currentTimeMillis();
                return System.currentTimeMillis() < deadline && !slot.closed() ? lease(request, group, max, deadline)
                    : Future.succeededFuture(new JsonObject().put("events", new JsonArray()));
              });
            }
            return slot.acknowledgeLater(accept, AcknowledgeType.ACCEPT)
                .map(x -> handOut(request, group, slot, leased, bodies, visible, polledAt));
          });
    }).recover(err -> {
      // a batch that failed half way is handed back whole: closing the share consumer releases it
      retire(group, slot);
      return Future.failedFuture(err);
    });
  }

  /** Records that no caller of this consumer gets: another table's, a schema change, one from before its start, or unreadable. */
  private static boolean skipped(Group group, ConsumerRecord<String, String> r) {
    try {
      JsonObject body = new JsonObject(r.value());
      if ("DDL".equals(body.getString("op")) || !group.consumer.wants(body.getString("schema"), body.getString("table"))) {
        return true;
      }
      Instant from = group.deliversFrom;
      return from != null && OffsetDateTime.parse(body.getString("committed_at")).toInstant().isBefore(from);
    } catch (RuntimeException e) {
      LOG.warn("events: skipping a malformed record at {}-{}@{}", r.topic(), r.partition(), r.offset());
      return true;
    }
  }

  /** The same on every delivery of the change, and across key rotations: its position. */
  static String eventId(JsonObject body) {
    JsonObject p = body.getJsonObject("position");
    return p.getLong("commit") + "-" + p.getLong("change");
  }

  private JsonObject handOut(ToolRequest request, Group group, ShareSlot slot, Map<String, List<ConsumerRecord<String, String>>> leased,
      Map<String, JsonObject> bodies, Map<Long, JsonObject> visible, long polledAt) {
    long expires = polledAt + group.consumer.leaseSeconds() * 1000L - LEASE_MARGIN_MS;
    ShareSlot.Lease lease = new ShareSlot.Lease(slot.nextBatch(), expires, leased);
    slot.lease = lease;
    JsonObject sealed = new JsonObject().put("n", node.nodeId()).put("s", slot.id).put("b", lease.batch)
        .put("g", group.consumer.group()).put("e", expires);
    String token = keys.ring().seal(LEASE_PURPOSE, request.caller().id(), sealed.encode().getBytes(StandardCharsets.UTF_8));
    JsonArray events = new JsonArray();
    int redelivered = 0;
    for (Map.Entry<String, List<ConsumerRecord<String, String>>> e : leased.entrySet()) {
      int count = e.getValue().get(0).deliveryCount().map(Short::intValue).orElse(1);
      redelivered += count > 1 ? 1 : 0;
      events.add(new JsonObject().put("event_id", e.getKey()).put("lease_token", token).put("delivery_count", count)
          .put("change", visible.get(bodies.get(e.getKey()).getJsonObject("position").getLong("change"))));
    }
    lease.timer = vertx.setTimer(Math.max(1, expires - System.currentTimeMillis()), t -> {
      if (slot.lease == lease && !lease.done()) {
        // the broker's lock ran out: what the caller did not finish comes again, to anyone; this
        // share consumer cannot poll before it acknowledged the batch, so it goes, and a new one serves
        retire(group, slot);
      }
    });
    reportLeased(group);
    store.count(group.consumer.group(), events.size(), redelivered)
        .onFailure(err -> LOG.warn("events: counting deliveries failed: {}", err.getMessage()));
    return new JsonObject().put("events", events).put("lease_expires_at", Instant.ofEpochMilli(expires).toString());
  }

  /** An idle share consumer of the group taking batches of {@code max}, made when there is room; null when all hold leases. */
  private ShareSlot slot(Group group, int max) {
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
    }
    Map<String, Object> props = config.kafka().clientProperties();
    props.put("group.id", group.consumer.group());
    String id = incarnation + "." + slotIds.incrementAndGet();
    props.put("client.id", "tidemark-events-" + node.nodeId() + "-" + id);
    props.put("request.timeout.ms", (int) config.kafka().requestTimeoutMs());
    props.put("default.api.timeout.ms", (int) config.kafka().requestTimeoutMs());
    ShareSlot slot = new ShareSlot(id, context, props, topic, max);
    group.slots.add(slot);
    return slot;
  }

  private void closeIdle() {
    long now = System.currentTimeMillis();
    for (Group group : groups.values()) {
      new ArrayList<>(group.slots).stream().filter(s -> !s.busy && s.lease == null && now - s.idleSinceMs > IDLE_MS)
          .forEach(s -> retire(group, s));
    }
  }

  private void retire(Group group, ShareSlot slot) {
    group.slots.remove(slot);
    if (slot.lease != null && slot.lease.timer >= 0) {
      vertx.cancelTimer(slot.lease.timer);
    }
    slot.lease = null;
    slot.close();
    reportLeased(group);
  }

  /** Events this node leases now for the group, in the cluster map that events_status reads; an entry lives as long as a lease. */
  private void reportLeased(Group group) {
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

  // ---- events_ack, events_nack

  /** The lease token's claims, once it opened for this caller and this consumer; INVALID_LEASE otherwise. */
  private JsonObject claims(ToolRequest request) {
    String token = request.arguments().getString("lease_token", "");
    JsonObject claims = keys.ring().open(LEASE_PURPOSE, request.caller().id(), token)
        .map(bytes -> new JsonObject(new String(bytes, StandardCharsets.UTF_8)))
        .orElseThrow(() -> new ToolException(ErrorCode.INVALID_LEASE,
            "The lease_token was not issued to you by events_next; nothing changed. " + ErrorCode.INVALID_LEASE.hint(),
            new JsonObject().put("argument", "lease_token")));
    if (!store.groupId(request.caller().id(), request.arguments().getString("consumer")).equals(claims.getString("g"))) {
      throw new ToolException(ErrorCode.INVALID_LEASE, "The lease_token belongs to another consumer; nothing changed. "
          + ErrorCode.INVALID_LEASE.hint(), new JsonObject().put("argument", "lease_token"));
    }
    return claims;
  }

  private Future<ToolReply> route(ToolRequest request) {
    JsonObject claims;
    try {
      claims = claims(request);
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    String holder = claims.getString("n");
    if (node.nodeId().equals(holder)) {
      return resolveHere(request);
    }
    DeliveryOptions options = new DeliveryOptions().addHeader(Addresses.ACTION_HEADER, Actions.TOOL_CALL)
        .setSendTimeout(Math.max(1000, config.busSendTimeoutMs() - 1000));
    return vertx.eventBus().<JsonObject>request(Addresses.eventsNode(config.database().name(), holder), request.toJson(), options)
        .map(msg -> ToolReply.fromJson(msg.body()))
        .recover(err -> Future.failedFuture(err instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS
            ? new ToolException(ErrorCode.LEASE_EXPIRED, "The node that held this lease (" + holder + ") has left the cluster;"
                + " its events went back to the broker and come again. " + ErrorCode.LEASE_EXPIRED.hint())
            : unavailable("The node that holds this lease (" + holder + ") did not answer.")));
  }

  private Future<ToolReply> resolveHere(ToolRequest request) {
    JsonObject claims;
    try {
      claims = claims(request);
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    boolean ack = ToolCatalog.EVENTS_ACK.equals(request.tool());
    Group group = groups.get(claims.getString("g"));
    ShareSlot slot = group == null ? null : group.slots.stream().filter(s -> s.id.equals(claims.getString("s"))).findFirst().orElse(null);
    ShareSlot.Lease lease = slot == null ? null : slot.lease;
    if (lease == null && slot != null && slot.finished != null && slot.finished.batch == claims.getLong("b")
        && request.arguments().getJsonArray("event_ids").stream().allMatch(id -> slot.finished.resolved.contains(String.valueOf(id)))) {
      // every one of them was finished already: a retry of an ack whose answer was lost
      return Future.succeededFuture(resolved(ack, request.arguments().getJsonArray("event_ids").size()));
    }
    if (lease == null || lease.batch != claims.getLong("b") || System.currentTimeMillis() >= lease.expiresAtMs) {
      if (lease != null && lease.batch == claims.getLong("b")) {
        retire(group, slot);
      }
      return Future.failedFuture(expired());
    }
    List<String> unknown = new ArrayList<>();
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (Object o : request.arguments().getJsonArray("event_ids")) {
      String id = String.valueOf(o);
      List<ConsumerRecord<String, String>> recs = lease.records.get(id);
      if (recs == null) {
        unknown.add(id);
      } else if (!lease.resolved.contains(id)) {
        records.addAll(recs);
        ids.add(id);
      }
    }
    if (!unknown.isEmpty()) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_LEASE, "These event ids are not in this lease: " + unknown
          + "; nothing changed. " + ErrorCode.INVALID_LEASE.hint(), new JsonObject().put("argument", "event_ids")));
    }
    int done = request.arguments().getJsonArray("event_ids").size();
    if (records.isEmpty()) {
      return Future.succeededFuture(resolved(ack, done));
    }
    lease.resolved.addAll(ids);
    return slot.acknowledge(records, ack ? AcknowledgeType.ACCEPT : AcknowledgeType.RELEASE).compose(failed -> {
      if (!failed.isEmpty()) {
        LOG.info("events: the broker refused acknowledgements of consumer {}: {}", group.consumer.name(), failed.get(0).toString());
        retire(group, slot);
        return Future.failedFuture(expired());
      }
      if (slot.lease == lease && lease.done()) {
        vertx.cancelTimer(lease.timer);
        slot.finished = lease;
        slot.lease = null;
        slot.busy = false;
        slot.idleSinceMs = System.currentTimeMillis();
      }
      reportLeased(group);
      return Future.succeededFuture(resolved(ack, done));
    }, err -> {
      retire(group, slot);
      return Future.failedFuture(err instanceof KafkaException ? expired() : err);
    });
  }

  private static ToolReply resolved(boolean ack, int n) {
    return ack ? ToolReply.ok("events_ack: " + n + " acknowledged", new JsonObject().put("acknowledged", n))
        : ToolReply.ok("events_nack: " + n + " handed back", new JsonObject().put("released", n));
  }

  private static ToolException expired() {
    return new ToolException(ErrorCode.LEASE_EXPIRED, "The lease of these events ended before this call; nothing was acknowledged,"
        + " and they come again. " + ErrorCode.LEASE_EXPIRED.hint(), new JsonObject().put("argument", "lease_token"));
  }

  // ---- events_status

  private Future<ToolReply> status(ToolRequest request) {
    String name = request.arguments().getString("consumer");
    return existing(request.caller(), name).compose(c -> partitions().compose(tps -> {
      Future<Map<TopicPartition, SharePartitionOffsetInfo>> positions = kafka(admin.listShareGroupOffsets(
          Map.of(c.group(), new ListShareGroupOffsetsSpec().topicPartitions(tps))).partitionsToOffsetInfo(c.group()))
          .otherwise(err -> Map.of());  // a group that never read has no position yet
      Future<Map<TopicPartition, Long>> earliest = offsets(tps, OffsetSpec.earliest());
      Future<long[]> dead = copyDeadLetters(c).compose(x -> store.deadLetterCounts(c.group()));
      Future<Integer> leased = leasedNow(c.group());
      return Future.all(positions, earliest, dead, leased).map(x -> {
        JsonArray position = new JsonArray();
        long lag = 0;
        long missed = 0;
        for (TopicPartition tp : tps) {
          SharePartitionOffsetInfo info = positions.result() == null ? null : positions.result().get(tp);
          if (info == null) {
            continue;  // this consumer never read the partition yet
          }
          position.add(new JsonObject().put("partition", tp.partition()).put("offset", info.startOffset()));
          lag += info.lag().orElse(0L);
          missed += Math.max(0, earliest.result().getOrDefault(tp, 0L) - info.startOffset());
        }
        long pending = Math.max(0, lag - leased.result());
        JsonObject out = new JsonObject().put("consumer", name).put("tables", new JsonArray(c.tables()))
            .put("lease_seconds", c.leaseSeconds()).put("created_at", c.createdAt().toString()).put("position", position)
            .put("leased", leased.result()).put("pending", pending).put("delivered", c.delivered()).put("redelivered", c.redelivered())
            .put("dead_lettered", dead.result()[0]).put("redriven", dead.result()[1]).put("lag", lag).put("missed", missed);
        return ToolReply.ok("events_status: " + name + ", " + leased.result() + " leased, " + pending + " pending, "
            + dead.result()[0] + " dead-lettered" + (missed > 0 ? ", " + missed + " missed" : ""), out);
      });
    }));
  }

  private Future<Integer> leasedNow(String group) {
    return vertx.sharedData().<String, Integer>getAsyncMap(Addresses.EVENTS_LEASED_MAP).compose(m -> m.entries())
        .map(entries -> entries.entrySet().stream().filter(e -> e.getKey().startsWith(group + "|"))
            .mapToInt(e -> e.getValue() == null ? 0 : e.getValue()).sum())
        .otherwise(0);
  }

  private Future<Consumer> existing(Caller caller, String name) {
    return store.find(caller.id(), name).compose(found -> found.map(Future::succeededFuture).orElseGet(() -> Future.failedFuture(
        new ToolException(ErrorCode.NOT_FOUND, "You have no consumer named " + name + "; events_next creates it.",
            new JsonObject().put("argument", "consumer")))));
  }

  private Future<List<TopicPartition>> partitions() {
    return kafka(admin.describeTopics(List.of(topic)).allTopicNames())
        .map(d -> d.get(topic).partitions().stream().map(p -> new TopicPartition(topic, p.partition())).toList())
        .recover(err -> Future.failedFuture(unavailable("Kafka could not describe the changelog topic: " + err.getMessage())));
  }

  private Future<Map<TopicPartition, Long>> offsets(List<TopicPartition> tps, OffsetSpec spec) {
    Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
    tps.forEach(tp -> ask.put(tp, spec));
    return kafka(admin.listOffsets(ask).all()).map(result -> {
      Map<TopicPartition, Long> out = new HashMap<>();
      // a time after the last record has no offset (-1): the partition's end
      result.forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    });
  }

  // ---- events_seek

  private Future<ToolReply> seek(ToolRequest request) {
    Caller caller = request.caller();
    if (!config.events().adminRoles().contains(caller.pgRole())) {
      return Future.failedFuture(new ToolException(ErrorCode.PERMISSION_DENIED, "events_seek is for events administrators (roles in "
          + "events.admin-roles); your role is not one. " + ErrorCode.PERMISSION_DENIED.hint()));
    }
    String name = request.arguments().getString("consumer");
    String to = request.arguments().getString("to");
    OffsetDateTime time;
    String mode;
    switch (to) {
      case "earliest", "latest" -> {
        mode = to;
        time = null;
      }
      case "dead_letters" -> {
        mode = "keep";
        time = null;
      }
      default -> {
        try {
          time = OffsetDateTime.parse(to);
        } catch (DateTimeParseException e) {
          return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "to is earliest, latest, dead_letters or an ISO 8601"
              + " time with an offset, such as 2026-01-12T10:15:00Z.", new JsonObject().put("argument", "to")));
        }
        mode = "time";
      }
    }
    return existing(caller, name).compose(c -> copyDeadLetters(c).compose(x -> partitions()).compose(tps -> target(c, to, time, tps)).compose(target -> {
      if (target.isEmpty()) {
        return Future.succeededFuture(ToolReply.ok("events_seek: no dead letters to re-drive",
            new JsonObject().put("position", new JsonArray()).put("redriven", 0)));
      }
      String db = config.database().name();
      vertx.eventBus().publish(Addresses.eventsControl(db), new JsonObject().put("group", c.group()).put("action", "hold")
          .put("hold_ms", SEEK_EMPTY_WAIT_MS + 5000));
      return empty(c.group(), System.currentTimeMillis() + SEEK_EMPTY_WAIT_MS)
          .compose(x -> kafka(admin.alterShareGroupOffsets(c.group(), target).all())
              .recover(err -> Future.failedFuture(unavailable("Kafka did not move the consumer: " + err.getMessage()))))
          .compose(x -> store.moved(c.group(), mode, time, "dead_letters".equals(to)))
          .compose(redriven -> store.find(c.owner(), c.name()).map(moved -> {
            JsonArray position = new JsonArray();
            target.forEach((tp, offset) -> position.add(new JsonObject().put("partition", tp.partition()).put("offset", offset)));
            Instant from = moved.orElseThrow().deliversFrom();
            vertx.eventBus().publish(Addresses.eventsControl(db), new JsonObject().put("group", c.group()).put("action", "resume")
                .put("delivers_from", from == null ? null : from.toString()));
            return ToolReply.ok("events_seek: " + name + " moved to " + to, new JsonObject().put("position", position).put("redriven", redriven));
          }))
          .onFailure(err -> vertx.eventBus().publish(Addresses.eventsControl(db), new JsonObject().put("group", c.group())
              .put("action", "resume")));
    }));
  }

  /** Where each partition goes: empty for dead_letters when there are none. */
  private Future<Map<TopicPartition, Long>> target(Consumer c, String to, OffsetDateTime time, List<TopicPartition> tps) {
    if ("dead_letters".equals(to)) {
      return store.oldestDeadLetters(c.group()).map(oldest -> {
        Map<TopicPartition, Long> out = new HashMap<>();
        oldest.forEach(e -> out.put(new TopicPartition(topic, Integer.parseInt(e.getKey())), ((Number) e.getValue()).longValue()));
        return out;
      });
    }
    OffsetSpec spec = "earliest".equals(to) ? OffsetSpec.earliest() : "latest".equals(to) ? OffsetSpec.latest()
        : OffsetSpec.forTimestamp(time.toInstant().toEpochMilli());
    return offsets(tps, spec).compose(found -> {
      if (!found.containsValue(-1L)) {
        return Future.succeededFuture(found);
      }
      return offsets(tps, OffsetSpec.latest()).map(ends -> {
        Map<TopicPartition, Long> out = new HashMap<>(found);
        out.replaceAll((tp, o) -> o < 0 ? ends.get(tp) : o);
        return out;
      });
    });
  }

  /** Completes once the group has no members; UNAVAILABLE at {@code deadlineMs}. */
  private Future<Void> empty(String group, long deadlineMs) {
    return kafka(admin.describeShareGroups(List.of(group)).all()).compose(d -> {
      if (d.get(group) == null || d.get(group).members().isEmpty()) {
        return Future.succeededFuture();
      }
      if (System.currentTimeMillis() > deadlineMs) {
        return Future.failedFuture(unavailable("Workers still belong to the consumer's share group after "
            + SEEK_EMPTY_WAIT_MS / 1000 + " s; nothing moved. Call events_seek again."));
      }
      Promise<Void> later = Promise.promise();
      vertx.setTimer(200, t -> empty(group, deadlineMs).onComplete(later));
      return later.future();
    });
  }

  private void onControl(Message<JsonObject> msg) {
    JsonObject body = msg.body();
    String id = body.getString("group", "");
    Group group = groups.get(id);
    if ("hold".equals(body.getString("action"))) {
      holds.put(id, System.currentTimeMillis() + body.getLong("hold_ms", SEEK_EMPTY_WAIT_MS));
      if (group != null) {
        new ArrayList<>(group.slots).forEach(s -> retire(group, s));
      }
    } else if ("resume".equals(body.getString("action"))) {
      holds.remove(id);
      if (group != null && body.containsKey("delivers_from")) {
        String from = body.getString("delivers_from");
        group.deliversFrom = from == null ? null : Instant.parse(from);
      }
    }
  }

  // ---- helpers

  private static ToolException unavailable(String message) {
    return new ToolException(ErrorCode.UNAVAILABLE, message + " " + ErrorCode.UNAVAILABLE.hint());
  }

  private <T> Future<T> kafka(KafkaFuture<T> f) {
    Promise<T> promise = Promise.promise();
    f.whenComplete((value, err) -> context.runOnContext(v -> {
      if (err == null) {
        promise.complete(value);
      } else {
        Throwable cause = err;
        while ((cause instanceof java.util.concurrent.CompletionException || cause instanceof java.util.concurrent.ExecutionException)
            && cause.getCause() != null) {
          cause = cause.getCause();
        }
        promise.fail(cause);
      }
    }));
    return promise.future();
  }
}
