package dev.tidemark.query.events.impl;

import static dev.tidemark.query.events.impl.EventErrors.unavailable;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools;
import dev.tidemark.query.events.impl.ConsumerStore.Consumer;
import dev.tidemark.query.impl.ChangesSinceTool;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * events_next: a batch polled by one of the node's share consumers, dead letters and what the
 * caller may not see finished on the way, the rest rendered as changes_since shows it and handed
 * out as one lease, whose token names this node, the share consumer and the batch.
 */
public final class Leases {

  private static final Logger LOG = LoggerFactory.getLogger(Leases.class);
  /** Taken off each lease, so that an ack accepted here still finds the broker's lock. */
  private static final long LEASE_MARGIN_MS = 250;

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final SharePool pool;
  private final Consumers consumers;
  private final ConsumerStore store;
  private final ChangesSinceTool changes;
  private final CallerPools callers;
  private final LeaseTokens tokens;

  public Leases(Vertx vertx, NodeInfo node, TidemarkConfig config, SharePool pool, Consumers consumers, ConsumerStore store,
      ChangesSinceTool changes, CallerPools callers, LeaseTokens tokens) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.consumers = consumers;
    this.store = store;
    this.changes = changes;
    this.callers = callers;
    this.tokens = tokens;
  }

  public Future<ToolReply> next(ToolRequest request) {
    JsonObject args = request.arguments();
    String name = args.getString("consumer");
    List<String> tables = new ArrayList<>(new TreeSet<>(args.getJsonArray("tables").stream().map(String::valueOf).toList()));
    int lease = args.getInteger("lease_seconds", 30);
    int max = args.getInteger("max", 10);
    long waitMs = args.getLong("wait_ms", 1000L);
    long deadline = System.currentTimeMillis() + waitMs;
    return consumers.findOrCreate(request.caller(), name, tables, lease).compose(found -> {
      Consumer c = found.consumer();
      if (!c.tables().equals(tables) || c.leaseSeconds() != lease) {
        return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "Consumer " + name + " was created with tables "
            + c.tables() + " and lease_seconds " + c.leaseSeconds() + "; call it with those, or use another consumer name.",
            new JsonObject().put("argument", c.tables().equals(tables) ? "lease_seconds" : "tables")));
      }
      return lease(request, pool.groupOf(c), max, deadline).map(events -> reply(events, found.created()));
    });
  }

  private static ToolReply reply(JsonObject out, boolean created) {
    out.put("created", created);
    JsonArray events = out.getJsonArray("events");
    int n = events.size();
    // one lease token covers the batch: the summary line carries it once, each row the rest of its event
    String token = n == 0 ? null : events.getJsonObject(0).getString("lease_token");
    JsonArray rows = new JsonArray();
    for (Object e : events) {
      // a shallow copy: only the row's own lease_token goes, the change it shares with the event is not changed
      JsonObject row = new JsonObject(new LinkedHashMap<>(((JsonObject) e).getMap()));
      if (java.util.Objects.equals(token, row.getString("lease_token"))) {
        row.remove("lease_token");
      }
      rows.add(row);
    }
    return ToolReply.ok("events_next: " + n + (n == 1 ? " event" : " events") + (created ? " (consumer created)" : "")
        + (token == null ? "" : "; lease_token " + token + ", held until " + out.getString("lease_expires_at")), out, rows);
  }

  private Future<JsonObject> lease(ToolRequest request, Group group, int max, long deadline) {
    long now = System.currentTimeMillis();
    if (pool.held(group.consumer.group())) {
      return Future.failedFuture(EventErrors.held(group.consumer.name()));
    }
    ShareSlot slot;
    try {
      slot = pool.slot(group, max);
    } catch (ToolException refused) {
      return Future.failedFuture(refused);
    }
    if (slot == null) {
      return Future.failedFuture(unavailable("This node's " + config.events().consumersPerNode() + " share consumers of consumer "
          + group.consumer.name() + " all hold leases; acknowledge events, or call again when a lease ended."));
    }
    slot.busy = true;
    int maxDeliveries = config.events().maxDeliveries();
    // each record's body is parsed once, by the skip test on the share consumer's thread; the
    // future's completion publishes the map to the verticle's context
    Map<ConsumerRecord<String, String>, JsonObject> parsed = new IdentityHashMap<>();
    return slot.poll(Math.max(0, deadline - now), r -> skipped(group, r, parsed)).compose(records -> {
      long polledAt = System.currentTimeMillis();
      if (slot.closed()) {
        return Future.succeededFuture(new JsonObject().put("events", new JsonArray()));
      }
      Map<String, List<ConsumerRecord<String, String>>> byEvent = new LinkedHashMap<>();
      Map<String, JsonObject> bodies = new HashMap<>();
      List<ConsumerRecord<String, String>> accept = new ArrayList<>();
      JsonArray dead = new JsonArray();
      for (ConsumerRecord<String, String> r : records) {
        JsonObject body = parsed.get(r);
        String id = eventId(body);
        int count = r.deliveryCount().map(Short::intValue).orElse(1);
        if (count > maxDeliveries) {
          dead.add(DeadLetters.letter(r.partition(), r.offset(), count, body));
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
      pool.retire(group, slot);
      return Future.failedFuture(err);
    });
  }

  /** Records that no caller of this consumer gets: another table's, a schema change, one from before its start, or unreadable. */
  private static boolean skipped(Group group, ConsumerRecord<String, String> r, Map<ConsumerRecord<String, String>, JsonObject> parsed) {
    try {
      JsonObject body = new JsonObject(r.value());
      parsed.put(r, body);
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
    String token = tokens.seal(request.caller().id(), new JsonObject().put("n", node.nodeId()).put("s", slot.id)
        .put("b", lease.batch).put("g", group.consumer.group()).put("e", expires));
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
        pool.retire(group, slot);
      }
    });
    pool.reportLeased(group);
    store.count(group.consumer.group(), events.size(), redelivered)
        .onFailure(err -> LOG.warn("events: counting deliveries failed: {}", err.getMessage()));
    return new JsonObject().put("events", events).put("lease_expires_at", Instant.ofEpochMilli(expires).toString());
  }
}
