package dev.tidemark.gateway.impl.service;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.LocalDelivery;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.contract.WaitedFor;
import dev.tidemark.contract.tracing.Traces;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.tool.Grants;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's side of the event-bus seam: a tool request to the service that runs the tool, with
 * an explicit send timeout, and every way the bus can fail turned into a tool error the agent can
 * act on, so that a call never waits forever and never fails as a protocol error.
 */
public final class ServiceClient {

  private static final Logger LOG = LoggerFactory.getLogger(ServiceClient.class);

  private final Vertx vertx;
  private final long sendTimeoutMs;
  private final Grants grants;

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
    DeliveryOptions options = new DeliveryOptions().addHeader(Addresses.ACTION_HEADER, Actions.TOOL_CALL).setSendTimeout(budgetMs);
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
            return vertx.eventBus().<Object>request(address, request.toJson(), new DeliveryOptions(options).setSendTimeout(Math.max(1, leftMs)))
                .map(msg -> LocalDelivery.reply(msg.body()));
          }
          return ar.succeeded() ? Future.succeededFuture(ar.result()) : Future.failedFuture(ar.cause());
        })
        .recover(err -> Future.succeededFuture(ToolReply.failed(busFailure(tool, err))));
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
