package dev.tidemark.gateway.impl.stream;

import dev.tidemark.gateway.impl.call.ResponseChannel;
import dev.tidemark.gateway.impl.spec.McpMethods;
import dev.tidemark.contract.Addresses;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Drain;
import dev.tidemark.gateway.impl.call.InFlight;
import dev.tidemark.gateway.impl.http.Authentication;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.resource.SubscriptionHolders;
import dev.tidemark.gateway.impl.resource.Subscriptions;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A 2026-07-28 {@code subscriptions/listen} stream: live notifications of the resources it names
 * (and of list changes, when asked), reached at its own address on the gateway that holds it. It
 * first acknowledges what it honours; a URI the caller may not subscribe to is left out, not refused.
 */
public final class ListenStream {

  private static final Logger LOG = LoggerFactory.getLogger(ListenStream.class);

  /** A subscription this stream holds: the key it is kept under, the target that names the stream, and the URI as the client wrote it. */
  private record Entry(String key, String target, String uri) {}

  private final Vertx vertx;
  private final Subscriptions subscriptions;
  private final SubscriptionHolders holders;
  private final InFlight inFlight;
  /** The form a subscription to a URI is kept under; null when the caller may not subscribe to it. */
  private final BiFunction<Call, String, Future<String>> canonical;

  public ListenStream(Vertx vertx, Subscriptions subscriptions, SubscriptionHolders holders, InFlight inFlight,
      BiFunction<Call, String, Future<String>> canonical) {
    this.vertx = vertx;
    this.subscriptions = subscriptions;
    this.holders = holders;
    this.inFlight = inFlight;
    this.canonical = canonical;
  }

  /** @param opening the stream's first bytes ({@link ResponseChannel#openingOf}) */
  public void open(Call call, String opening) {
    ResponseChannel channel = call.channel();
    Object filter = call.params().getValue("notifications");
    if (filter != null && !(filter instanceof JsonObject)) {
      channel.finish(200, JsonRpc.error(call.id(), JsonRpc.INVALID_PARAMS, "params.notifications must be an object."));
      return;
    }
    JsonObject wanted = filter == null ? new JsonObject() : (JsonObject) filter;
    Object uris = wanted.getValue("resourceSubscriptions");
    if (uris != null && !(uris instanceof JsonArray a && a.stream().allMatch(u -> u instanceof String))) {
      channel.finish(200, JsonRpc.error(call.id(), JsonRpc.INVALID_PARAMS, "resourceSubscriptions must be an array of URIs."));
      return;
    }
    List<String> resourceUris = uris == null ? List.of() : ((JsonArray) uris).stream().map(String.class::cast).distinct().toList();
    if (resourceUris.size() > holders.perSession()) {
      // refused before a single URI is looked up
      channel.finish(200, holders.tooManyForOneStream(resourceUris.size()).toMessage(call.id()));
      return;
    }
    boolean listChanged = Boolean.TRUE.equals(wanted.getValue("resourcesListChanged"));
    boolean toolsChanged = Boolean.TRUE.equals(wanted.getValue("toolsListChanged"));
    JsonObject subscriptionMeta = new JsonObject().put(Meta.SUBSCRIPTION_ID, call.id());
    String listenerId = UUID.randomUUID().toString();
    List<Entry> entries = new ArrayList<>();
    MessageConsumer<JsonObject> consumer = vertx.eventBus().consumer(Addresses.listen(listenerId), msg -> {
      JsonObject note = msg.body().copy();
      note.getJsonObject("params").put("_meta", subscriptionMeta.copy());
      channel.send(note);
      msg.reply(null);
    });
    String callerId = call.caller().id();
    long keepAlive = vertx.setPeriodic(ResponseChannel.KEEP_ALIVE_MILLIS, t -> {
      channel.keepAlive();
      holders.renewListen(callerId, listenerId); // its subscriptions count against the caller while it is open
    });
    Runnable cleanup = () -> {
      vertx.cancelTimer(keepAlive);
      inFlight.releaseStream(listenerId);
      consumer.unregister();
      entries.forEach(e -> subscriptions.remove(call.database(), e.key(), e.target()));
      holders.releaseListen(callerId, listenerId);
    };
    channel.onClose(cleanup);
    inFlight.holdStream(listenerId, new InFlight.Held(call.caller(),
        () -> channel.finish(200, JsonRpc.result(call.id(), new JsonObject()
            .put("resultType", "complete").put("_meta", subscriptionMeta.copy()))).onComplete(ar -> cleanup.run()),
        () -> channel.revoked(JsonRpc.error(call.id(), JsonRpc.INVALID_REQUEST, Authentication.REVOKED_MESSAGE)).onComplete(ar -> cleanup.run()),
        // a draining node ends the stream with an error the client answers by listening again elsewhere
        () -> channel.retryHint().compose(v -> channel.finish(200, Drain.error(call.id(), Drain.STREAM_MESSAGE)))
            .onComplete(ar -> cleanup.run())),
        call.authenticatedAtNanos());
    if (channel.closed()) {
      return; // revoked while its credentials were being checked
    }
    List<Future<Entry>> resolving = new ArrayList<>();
    for (String uri : resourceUris) {
      resolving.add(canonical.apply(call, uri).map(key -> key == null ? null
          : new Entry(key, Subscriptions.listenerTarget(listenerId, uri), uri))
          // a URI the caller may not subscribe to is left out; a query service that could not say fails the stream
          .recover(err -> err instanceof RpcFailure f && f.code() == JsonRpc.INVALID_PARAMS
              ? Future.succeededFuture(null) : Future.failedFuture(err)));
    }
    if (listChanged) {
      resolving.add(Future.succeededFuture(new Entry(Subscriptions.LIST_CHANGED,
          Subscriptions.listenerTarget(listenerId, Subscriptions.LIST_CHANGED), null)));
    }
    if (toolsChanged) {
      resolving.add(Future.succeededFuture(new Entry(Subscriptions.TOOLS_LIST_CHANGED,
          Subscriptions.listenerTarget(listenerId, Subscriptions.TOOLS_LIST_CHANGED), null)));
    }
    consumer.completion()
        .compose(v -> Future.all(resolving))
        .compose(all -> {
          JsonArray honoured = new JsonArray();
          resolving.stream().map(Future::result).filter(e -> e != null).forEach(e -> {
            entries.add(e);
            if (e.uri() != null) {
              honoured.add(e.uri());
            }
          });
          JsonObject acknowledged = new JsonObject();
          if (listChanged) {
            acknowledged.put("resourcesListChanged", true);
          }
          if (toolsChanged) {
            acknowledged.put("toolsListChanged", true);
          }
          if (!honoured.isEmpty()) {
            acknowledged.put("resourceSubscriptions", honoured);
          }
          int resources = (int) entries.stream().filter(e -> e.uri() != null).count();
          return holders.holdListen(callerId, listenerId, resources)
              .compose(held -> Future.all(entries.stream().map(e -> subscriptions.add(call.database(), e.key(), e.target())).toList()))
              .compose(v -> channel.openStaying(opening))
              .compose(v -> channel.send(new JsonObject().put("jsonrpc", "2.0").put("method", McpMethods.NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED)
                  .put("params", new JsonObject().put("_meta", subscriptionMeta.copy()).put("notifications", acknowledged))));
        })
        .onFailure(err -> {
          if (!(err instanceof RpcFailure)) {
            LOG.warn("listen stream failed to open: {}", err.toString());
          }
          cleanup.run();
          channel.finish(200, err instanceof RpcFailure f ? f.toMessage(call.id())
              : JsonRpc.error(call.id(), JsonRpc.INTERNAL_ERROR, "The subscription could not be opened; retry shortly."));
        });
  }
}
