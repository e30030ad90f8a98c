package dev.tidemark.command.impl;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.ToolCalls;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ChangeCause;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * A change's {@code caused_by}: the event it reacts to. The idempotency key comes from the event,
 * so the reaction to a redelivered event replays the first one's outcome; the lease is asked of
 * the events role (over the event bus, on the node that holds it) before the change's
 * transaction; and the event can be acknowledged once the change committed. The key's prefix is
 * reserved for this: a caller's own key cannot claim that an event caused its change.
 */
public final class Causes {

  private static final Pattern EVENT_ID = Pattern.compile("[0-9]{1,19}-[0-9]{1,19}");

  private final Vertx vertx;
  private final String database;
  private final long timeoutMs;

  public Causes(Vertx vertx, String database, long timeoutMs) {
    this.vertx = vertx;
    this.database = database;
    this.timeoutMs = timeoutMs;
  }

  /**
   * The idempotency key of a call: derived from {@code caused_by} when it has one, else the one it
   * sent. INVALID_ARGUMENTS for a malformed cause, a cause beside a key of its own, and a key of its
   * own that takes the reserved prefix.
   */
  static String key(JsonObject args) {
    Object given = args.getValue("caused_by");
    String key = args.getString("idempotency_key");
    if (given == null) {
      if (key != null && key.startsWith(ChangeCause.KEY_PREFIX)) {
        throw invalid("idempotency_key", "An idempotency_key starting with '" + ChangeCause.KEY_PREFIX + "' is derived from caused_by;"
            + " choose another key, or send caused_by for a reaction to an event.");
      }
      return key;
    }
    JsonObject cause = (JsonObject) given;
    if (key != null) {
      throw invalid("idempotency_key", "A reaction's idempotency key is derived from its event (caused_by); send no idempotency_key.");
    }
    for (String field : new String[] {"consumer", "event_id", "lease_token"}) {
      if (!(cause.getValue(field) instanceof String s) || s.isEmpty() || s.length() > 8192) {
        throw invalid("caused_by/" + field, "caused_by needs " + field + ", as events_next gave it.");
      }
    }
    if (!EVENT_ID.matcher(cause.getString("event_id")).matches()) {
      throw invalid("caused_by/event_id", "caused_by.event_id is an event_id as events_next gives it.");
    }
    if (cause.getValue("ack") != null && !(cause.getValue("ack") instanceof Boolean)) {
      throw invalid("caused_by/ack", "caused_by.ack is true or false.");
    }
    for (String field : cause.fieldNames()) {
      if (!Arrays.asList("consumer", "event_id", "lease_token", "ack").contains(field)) {
        throw invalid("caused_by/" + field, "caused_by has consumer, event_id, lease_token and ack only.");
      }
    }
    return ChangeCause.key(cause.getString("consumer"), cause.getString("event_id"));
  }

  /** Succeeds when the caller still holds the event's lease; LEASE_EXPIRED or INVALID_LEASE, as events_ack would answer, otherwise. */
  Future<Void> held(ToolRequest request) {
    return ask(request, Actions.LEASE_HELD).<Void>mapEmpty().recover(err -> Future.failedFuture(
        err instanceof ToolException te && te.code() == ErrorCode.LEASE_EXPIRED ? new ToolException(ErrorCode.LEASE_EXPIRED,
            "The lease on the event of caused_by ended (it lapsed, or the event was acknowledged or handed back), so another worker"
                + " may be reacting to it: nothing was written. Lease the events again; the reaction to a redelivered event replays"
                + " what was committed for it.", new JsonObject().put("argument", "caused_by")) : err));
  }

  /** Acknowledges the event once its change committed: null when it was, else why not (the change stays committed). */
  Future<String> acknowledge(ToolRequest request) {
    return ask(request, ToolCatalog.EVENTS_ACK).map(reply -> (String) null).recover(err -> Future.succeededFuture(
        err instanceof ToolException te ? te.code().code() + ": " + te.getMessage() : "the events role did not answer: " + err.getMessage()));
  }

  private Future<ToolReply> ask(ToolRequest request, String tool) {
    JsonObject cause = request.arguments().getJsonObject("caused_by");
    JsonObject args = new JsonObject().put("consumer", cause.getString("consumer")).put("lease_token", cause.getString("lease_token"))
        .put("event_ids", new JsonArray().add(cause.getString("event_id")));
    ToolRequest asked = new ToolRequest(request.requestId(), request.database(), tool, args, request.caller());
    return ToolCalls.ask(vertx, Addresses.events(database), asked, timeoutMs)
        .recover(err -> Future.failedFuture(new ToolException(ErrorCode.UNAVAILABLE, err instanceof ReplyException re
            && re.failureType() == ReplyFailure.NO_HANDLERS ? "No node runs the events tools, so the lease of caused_by cannot be"
            + " checked; nothing was written." : "The events role did not answer whether the lease of caused_by is held; nothing was"
            + " written.")))
        .compose(reply -> {
          if (!reply.isError()) {
            return Future.succeededFuture(reply);
          }
          ToolException e = ToolException.fromJson(reply.error());
          return Future.failedFuture(new ToolException(e.code(), e.getMessage(), e.details().put("argument", "caused_by")));
        });
  }

  private static ToolException invalid(String argument, String message) {
    return new ToolException(ErrorCode.INVALID_ARGUMENTS, message + " Nothing was written.", new JsonObject().put("argument", argument));
  }
}
