package dev.tidemark.gateway.impl.service;

import dev.tidemark.contract.ToolCalls;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.LocalDelivery;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.WaitedFor;
import dev.tidemark.telemetry.tracing.Traces;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.context.OwnContext;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's side of the event-bus seam: a tool request to the service that runs the tool, with
 * an explicit send timeout, and every way the bus can fail turned into a tool error the agent can
 * act on, so that a call never waits forever and never fails as a protocol error. One per node,
 * shared by every gateway instance: it hears once which members leave, and ends the calls of every
 * instance that were on them ({@code remote}, a concurrent map of calls from every event loop).
 */
public final class ServiceClient {

  private static final Logger LOG = LoggerFactory.getLogger(ServiceClient.class);

  private final Vertx vertx;
  private final long sendTimeoutMs;
  private final Grants grants;
  /** Calls sent to other members, by request id, until their reply. */
  private final Map<String, Remote> remote = new ConcurrentHashMap<>();
  private MessageConsumer<String> leavers;

  /** How long a member that remains may take to say which calls it holds. */
  static final long ASK_TIMEOUT_MILLIS = 1000;
  /** When the members are asked again, for calls that were on their way to one of them. */
  static final long ASK_AGAIN_MILLIS = 250;

  private record Remote(ToolDescriptor tool, Promise<ToolReply> answer) {}

  /** @param grants whose role ceilings hold for what the gateway reads on a caller's behalf too */
  public ServiceClient(Vertx vertx, long sendTimeoutMs, Grants grants) {
    this.vertx = vertx;
    this.sendTimeoutMs = sendTimeoutMs;
    this.grants = grants;
    LocalDelivery.register(vertx);
  }

  /**
   * The service's reply; never fails: a bus failure is a failed {@link ToolReply}. A service of
   * this node answers first, with the request and the reply handed over as objects
   * ({@link LocalDelivery}); when this node runs none (or its own is draining), the request goes to
   * the cluster as JSON. For the events tools that also keeps a worker's leases on the node its calls
   * reach, so its acks need no second hop, and a node that stops hands back only its own workers' leases.
   */
  public Future<ToolReply> send(ToolDescriptor tool, ToolRequest request) {
    long budgetMs = sendTimeoutMs + waitMs(request.arguments());
    long started = System.nanoTime();
    DeliveryOptions options = ToolCalls.options(budgetMs);
    String address = Addresses.forService(tool.service(), request.database());
    Future<ToolReply> local = vertx.eventBus().<Object>request(address, request, LocalDelivery.localOnly(options))
        .map(msg -> LocalDelivery.reply(msg.body()));
    return local
        .transform(ar -> {
          boolean noneHere = ar.failed() && ar.cause() instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS;
          boolean poolFull = ar.succeeded() && waitedForConnection(ar.result());
          // the call's one deadline covers both tries: a second try gets only what the first one left
          long leftMs = budgetMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
          if (noneHere || poolFull && leftMs > 0 && othersInCluster()) {
            // none here, or this node's pool is full and nothing ran: the cluster's services take it
            return toCluster(tool, address, request, new DeliveryOptions(options).setSendTimeout(Math.max(1, leftMs)));
          }
          return ar.succeeded() ? Future.succeededFuture(ar.result()) : Future.failedFuture(ar.cause());
        })
        .recover(err -> Future.succeededFuture(ToolReply.failed(busFailure(tool, err))));
  }

  /**
   * A call sent to the cluster, answered by its reply or, when the member running it left, at once.
   * The node's one listener for leaving members answers on its own loop, so the call hears it on its own.
   */
  private Future<ToolReply> toCluster(ToolDescriptor tool, String address, ToolRequest request, DeliveryOptions options) {
    Promise<ToolReply> answer = OwnContext.promise();
    String id = request.requestId();
    remote.put(id, new Remote(tool, answer));
    vertx.eventBus().<Object>request(address, request.toJson(), options)
        .map(msg -> LocalDelivery.reply(msg.body()))
        .andThen(ar -> remote.remove(id))
        .onSuccess(answer::tryComplete)
        .onFailure(answer::tryFail);
    return answer.future();
  }

  /** Hears of members that leave the cluster, to end the calls that died with them. */
  public Future<Void> start() {
    leavers = vertx.eventBus().localConsumer(Addresses.NODE_LEFT_V1, msg -> nodeLeft(msg.body()));
    return leavers.completion();
  }

  public Future<Void> stop() {
    return leavers == null ? Future.succeededFuture() : leavers.unregister();
  }

  /**
   * A member left: which service ran a call is not known (the event bus picked it), so every member
   * that remains is asked which of this gateway's calls in flight it holds, twice, {@link #ASK_AGAIN_MILLIS}
   * apart, for a call that was on its way to a member that remains when it left; the calls none
   * holds either time are answered UNAVAILABLE now. When a member does not answer, nothing is
   * decided: those calls keep waiting for their reply or their timeout.
   */
  private void nodeLeft(String left) {
    ClusterManager manager = vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
    if (remote.isEmpty() || manager == null) {
      return;
    }
    List<String> members;
    try {
      members = List.copyOf(manager.getNodes());
    } catch (RuntimeException leaving) {
      return; // this node is leaving the cluster itself
    }
    Set<String> inFlight = Set.copyOf(remote.keySet());
    unheld(members, inFlight)
        .compose(unheld -> unheld.isEmpty() ? Future.succeededFuture(unheld)
            : vertx.timer(ASK_AGAIN_MILLIS).compose(t -> unheld(members, unheld)))
        .onSuccess(lost -> {
          if (!lost.isEmpty()) {
            LOG.info("member {} left the cluster: {} call(s) in flight on it answered UNAVAILABLE", left, lost.size());
          }
          lost.forEach(id -> {
            Remote call = remote.remove(id);
            if (call != null) {
              call.answer().tryComplete(ToolReply.failed(lostWith(call.tool())));
            }
          });
        })
        .onFailure(err -> LOG.info("member {} left the cluster; which calls ran on it is not known ({}): they wait for their reply",
            left, err.toString()));
  }

  /** Those of {@code ids} that no member of {@code members} holds; fails when a member that runs a service did not answer. */
  private Future<Set<String>> unheld(List<String> members, Set<String> ids) {
    JsonObject ask = new JsonObject().put("request_ids", new JsonArray(List.copyOf(ids)));
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(ASK_TIMEOUT_MILLIS);
    List<Future<JsonArray>> answers = members.stream()
        .map(member -> vertx.eventBus().<JsonObject>request(Addresses.running(member), ask, options)
            .map(msg -> msg.body().getJsonArray("running", new JsonArray()))
            // a member that runs no service holds no call
            .recover(err -> err instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS
                ? Future.succeededFuture(new JsonArray()) : Future.failedFuture(err)))
        .toList();
    return Future.all(answers).map(done -> {
      Set<String> unheld = new HashSet<>(ids);
      answers.forEach(a -> a.result().forEach(unheld::remove));
      return unheld;
    });
  }

  ToolException lostWith(ToolDescriptor tool) {
    String service = tool.service().name().toLowerCase(Locale.ROOT);
    String change = tool.service() == dev.tidemark.contract.Service.COMMAND
        ? " It may have committed before: sent again with the same idempotency_key, a change is applied at most once." : "";
    return new ToolException(ErrorCode.UNAVAILABLE, "The node of the " + service + " service that ran this call left the cluster"
        + " before it answered." + change + " " + ErrorCode.UNAVAILABLE.hint(), WaitedFor.SERVICE.details());
  }

  /**
   * Whether another node is in the cluster. Alone, the cluster's services are this node's own, whose
   * pool has just refused the call: asking them again would only make the caller wait twice as long.
   */
  private boolean othersInCluster() {
    ClusterManager manager = vertx instanceof VertxInternal internal ? internal.clusterManager() : null;
    try {
      return manager != null && manager.getNodes().size() > 1;
    } catch (RuntimeException leaving) {
      return false;  // the node is leaving the cluster
    }
  }

  /** A refusal that guarantees the call ran nothing, so another node may run it. */
  private static boolean waitedForConnection(ToolReply reply) {
    return reply.isError() && ErrorCode.UNAVAILABLE.code().equals(reply.error().getString("code"))
        && WaitedFor.CONNECTION.in(reply.error());
  }

  /** A call that long-polls ({@code watch}'s {@code wait_ms}, validated against its schema) may answer that much later. */
  static long waitMs(JsonObject arguments) {
    return arguments.getValue("wait_ms") instanceof Number n ? Math.max(0, Math.min(n.longValue(), MAX_WAIT_MS)) : 0;
  }

  private static final long MAX_WAIT_MS = 30_000;

  /**
   * A new request of {@code call}'s caller to run {@code tool} with {@code arguments}, under the
   * trace of the request running now (the call's span), so that the service's span is its child.
   */
  public static ToolRequest request(Call call, String tool, JsonObject arguments) {
    Map<String, String> trace = Traces.inject(Traces.current());
    return new ToolRequest(UUID.randomUUID().toString(), call.database(), tool, arguments, call.caller(),
        trace.get(Traces.TRACEPARENT), trace.get(Traces.TRACESTATE));
  }

  /** Runs a read tool as the caller, for what the gateway serves on top of the tools (resources, completion). */
  public Future<ToolReply> read(Call call, String tool, JsonObject arguments) {
    if (!grants.withinCeiling(call.caller().pgRole(), tool)) {
      // a resource or a completion must not reach past the tools the role may call
      return Future.succeededFuture(ToolReply.failed(new ToolException(ErrorCode.PERMISSION_DENIED,
          "Your role may not use " + tool + ", which this needs. " + ErrorCode.PERMISSION_DENIED.hint())));
    }
    return send(ToolCatalog.find(tool).orElseThrow(), request(call, tool, arguments));
  }

  ToolException busFailure(ToolDescriptor tool, Throwable err) {
    String service = tool.service().name().toLowerCase(Locale.ROOT);
    if (err instanceof ReplyException re && re.failureType() == ReplyFailure.TIMEOUT) {
      return new ToolException(ErrorCode.UNAVAILABLE, "No " + service + " service answered within " + sendTimeoutMs
          + " ms. " + ErrorCode.UNAVAILABLE.hint(), WaitedFor.SERVICE.details());
    }
    if (err instanceof ReplyException re && re.failureType() == ReplyFailure.NO_HANDLERS) {
      return new ToolException(ErrorCode.UNAVAILABLE, "No " + service + " service is running in the cluster. " + ErrorCode.UNAVAILABLE.hint());
    }
    if (err instanceof ReplyException re && re.failureType() != ReplyFailure.RECIPIENT_FAILURE) {
      // the message never reached a live service, or the node went away while it ran
      return new ToolException(ErrorCode.UNAVAILABLE, "The " + service + " service could not be reached. " + ErrorCode.UNAVAILABLE.hint());
    }
    LOG.warn("tool {} failed on the event bus: {}", tool.name(), err.toString());
    return new ToolException(ErrorCode.INTERNAL, "The service failed while running the tool. " + ErrorCode.INTERNAL.hint());
  }
}
