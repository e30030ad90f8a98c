package dev.tidemark.query.events.impl;

import static dev.tidemark.query.events.impl.EventErrors.expired;
import static dev.tidemark.query.events.impl.EventErrors.unavailable;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.ToolCalls;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * events_ack and events_nack: routed to the node the lease token names, over
 * {@link Addresses#eventsNode}, and resolved there by the share consumer that holds the lease,
 * which acknowledges the records and commits.
 */
public final class Acknowledgements {

  private static final Logger LOG = LoggerFactory.getLogger(Acknowledgements.class);

  private final Vertx vertx;
  private final NodeInfo node;
  private final TidemarkConfig config;
  private final SharePool pool;
  private final LeaseTokens tokens;

  public Acknowledgements(Vertx vertx, NodeInfo node, TidemarkConfig config, SharePool pool, LeaseTokens tokens) {
    this.vertx = vertx;
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.tokens = tokens;
  }

  /** An ack or nack taken at the cluster address: resolved here when this node holds the lease, forwarded otherwise. */
  public Future<ToolReply> route(ToolRequest request) {
    return opened(request).compose(claims -> forward(request, claims));
  }

  private Future<ToolReply> forward(ToolRequest request, JsonObject claims) {
    String holder = claims.getString("n");
    if (node.nodeId().equals(holder)) {
      return resolve(request, claims);
    }
    return ToolCalls.ask(vertx, Addresses.eventsNode(config.database().name(), holder), request,
            Math.max(1000, config.busSendTimeoutMs() - 1000))
        .recover(err -> Future.failedFuture(err instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS
            ? new ToolException(ErrorCode.LEASE_EXPIRED, "The node that held this lease (" + holder + ") has left the cluster;"
                + " its events went back to the broker and come again. " + ErrorCode.LEASE_EXPIRED.hint())
            : unavailable("The node that holds this lease (" + holder + ") did not answer.")));
  }

  /** An ack or nack of a lease this node's share consumer holds (or held: a retry is answered as the first was). */
  public Future<ToolReply> resolveHere(ToolRequest request) {
    return opened(request).compose(claims -> resolve(request, claims));
  }

  /** The lease token's claims; INVALID_LEASE, with nothing changed, when it is not the caller's for this consumer. */
  private Future<JsonObject> opened(ToolRequest request) {
    try {
      return Future.succeededFuture(tokens.claims(request));
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
  }

  private Future<ToolReply> resolve(ToolRequest request, JsonObject claims) {
    if (Actions.LEASE_HELD.equals(request.tool())) {
      return held(request, claims);
    }
    boolean ack = ToolCatalog.EVENTS_ACK.equals(request.tool());
    JsonArray eventIds = request.arguments().getJsonArray("event_ids");
    Group group = pool.group(claims.getString("g"));
    ShareSlot slot = pool.find(group, claims.getString("s"));
    ShareSlot.Lease lease = slot == null ? null : slot.lease;
    if (lease == null && slot != null && slot.finished != null && slot.finished.batch == claims.getLong("b")
        && eventIds.stream().allMatch(id -> slot.finished.resolved.contains(String.valueOf(id)))) {
      // every one of them was finished already: a retry of an ack whose answer was lost
      return Future.succeededFuture(resolved(ack, eventIds.size()));
    }
    if (lease == null || lease.batch != claims.getLong("b") || System.currentTimeMillis() >= lease.expiresAtMs) {
      if (lease != null && lease.batch == claims.getLong("b")) {
        pool.retire(group, slot);
      }
      return Future.failedFuture(expired());
    }
    List<String> unknown = new ArrayList<>();
    List<ConsumerRecord<String, String>> records = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (Object o : eventIds) {
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
    if (records.isEmpty()) {
      return Future.succeededFuture(resolved(ack, eventIds.size()));
    }
    lease.resolved.addAll(ids);
    return slot.acknowledge(records, ack ? AcknowledgeType.ACCEPT : AcknowledgeType.RELEASE).compose(failed -> {
      if (!failed.isEmpty()) {
        LOG.info("events: the broker refused acknowledgements of consumer {}: {}", group.consumer.name(), failed.get(0).toString());
        pool.retire(group, slot);
        return Future.failedFuture(expired());
      }
      if (slot.lease == lease && lease.done()) {
        vertx.cancelTimer(lease.timer);
        slot.finished = lease;
        slot.lease = null;
        slot.busy = false;
        slot.idleSinceMs = System.currentTimeMillis();
      }
      pool.reportLeased(group);
      return Future.succeededFuture(resolved(ack, eventIds.size()));
    }, err -> {
      pool.retire(group, slot);
      return Future.failedFuture(err instanceof KafkaException ? expired() : err);
    });
  }

  /**
   * Whether the caller still holds the lease on the event (one of {@code event_ids}) that a change
   * reacts to: the command role asks before it commits the change. An event acknowledged or handed
   * back already is no longer held.
   */
  private Future<ToolReply> held(ToolRequest request, JsonObject claims) {
    String id = String.valueOf(request.arguments().getJsonArray("event_ids").getValue(0));
    Group group = pool.group(claims.getString("g"));
    ShareSlot slot = pool.find(group, claims.getString("s"));
    ShareSlot.Lease lease = slot == null ? null : slot.lease;
    if (lease == null || lease.batch != claims.getLong("b") || System.currentTimeMillis() >= lease.expiresAtMs
        || lease.resolved.contains(id)) {
      return Future.failedFuture(expired());
    }
    if (!lease.records.containsKey(id)) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_LEASE, "Event " + id + " is not in this lease; nothing changed. "
          + ErrorCode.INVALID_LEASE.hint(), new JsonObject().put("argument", "event_id")));
    }
    return Future.succeededFuture(ToolReply.ok("held", new JsonObject().put("held", true)));
  }

  private static ToolReply resolved(boolean ack, int n) {
    return ack ? ToolReply.ok("events_ack: " + n + " acknowledged", new JsonObject().put("acknowledged", n))
        : ToolReply.ok("events_nack: " + n + " handed back", new JsonObject().put("released", n));
  }
}
