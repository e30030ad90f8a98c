package dev.tidemark.query.events;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.telemetry.tracing.Traces;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.Pools;
import dev.tidemark.database.toolserver.ToolServer;
import dev.tidemark.telemetry.metrics.Meters;
import dev.tidemark.query.events.impl.Acknowledgements;
import dev.tidemark.query.events.impl.ConsumerJanitor;
import dev.tidemark.query.events.impl.ConsumerLagProbe;
import dev.tidemark.query.events.impl.ConsumerStore;
import dev.tidemark.query.events.impl.Consumers;
import dev.tidemark.query.events.impl.DeadLetters;
import dev.tidemark.query.events.impl.GroupAdmin;
import dev.tidemark.query.events.impl.LeaseTokens;
import dev.tidemark.query.events.impl.Leases;
import dev.tidemark.query.events.impl.Seek;
import dev.tidemark.query.events.impl.SharePool;
import dev.tidemark.query.events.impl.StatusReport;
import dev.tidemark.query.impl.ChangesSinceTool;
import io.opentelemetry.api.trace.Tracer;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events tools of one database on one node with the query role: durable consumers over Kafka
 * share groups, one group per consumer. The broker's acquisition locks are the leases; this node
 * keeps up to {@code events.consumers-per-node} share consumers per consumer ({@link SharePool}),
 * each holding one batch at a time, and names the node, the share consumer and the batch in each
 * lease token ({@link LeaseTokens}). next, status and seek come to the cluster address
 * ({@link Addresses#events}); an ack or nack is forwarded from there to the node that holds its
 * lease ({@link Addresses#eventsNode}); seeks hold and resume consumers on every node
 * ({@link Addresses#eventsControl}).
 */
public final class EventsVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(EventsVerticle.class);

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  /** Tidemark's login on the database the changelog is stored in, for the attribution of changes shown: {@link #pool} unless database.changelog-url is set. */
  private Pool changelog;
  private final List<MessageConsumer<?>> consumers = new ArrayList<>();
  private GroupAdmin admin;
  private SharePool slots;
  private CallerPools callers;
  private Leases leases;
  private dev.tidemark.query.events.impl.EventContexts contexts;
  private Acknowledgements acks;
  private StatusReport status;
  private Seek seek;
  private ConsumerLagProbe lag;
  private ConsumerJanitor janitor;
  private ConsumerStore store;
  private long idleTimer = -1;

  /** @param pool Tidemark's login: consumers, dead letters and the key ring */
  public EventsVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this.node = node;
    this.config = config;
    this.pool = pool;
  }

  @Override
  public Future<?> start() {
    String db = config.database().name();
    Tracer tracer = Traces.tracer(vertx);
    store = new ConsumerStore(pool, db);
    admin = new GroupAdmin(context, node, config);
    slots = new SharePool(context, node, config);
    DeadLetters deadLetters = new DeadLetters(vertx, node, config, admin, store);
    Consumers found = new Consumers(store, admin, deadLetters, slots, config.events(), Meters.of(vertx).events());
    janitor = new ConsumerJanitor(vertx, node, config, store, admin);
    status = new StatusReport(admin, found, deadLetters, store, slots, config.events());
    seek = new Seek(vertx, config, admin, found, deadLetters, store, slots);
    lag = new ConsumerLagProbe(vertx, store, admin);
    changelog = Pools.changelog(vertx, config.database(), pool);
    return KeyRingSource.start(vertx, pool, config.keysRefreshSeconds()).compose(keys -> {
      callers = new CallerPools(vertx, config.database(), keys, CallerPools.Prepared.NONE);
      LeaseTokens tokens = new LeaseTokens(keys, store);
      leases = new Leases(vertx, node, config, slots, found, store, new ChangesSinceTool(config.database(), pool, changelog), callers, tokens);
      acks = new Acknowledgements(vertx, node, config, slots, tokens);
      contexts = new dev.tidemark.query.events.impl.EventContexts(vertx, config, callers, keys,
          new dev.tidemark.database.FunctionGuard(pool, config.database().reviewedFunctions(), config.database().catalogCacheMs()));
      consumers.add(vertx.eventBus().<Object>consumer(Addresses.events(db),
          msg -> ToolServer.answer(msg, node, pool, tracer, this::run, LOG)));
      consumers.add(vertx.eventBus().consumer(Addresses.eventsNode(db, node.nodeId()),
          msg -> ToolServer.answer(msg, node, pool, tracer, acks::resolveHere, LOG)));
      consumers.add(vertx.eventBus().consumer(Addresses.eventsControl(db), slots::onControl));
      idleTimer = vertx.setPeriodic(Math.max(100, slots.idleMs() / 2), t -> slots.closeIdle());
      lag.start();
      janitor.start();
      return Future.all(consumers.stream().map(MessageConsumer::completion).toList());
    });
  }

  @Override
  public Future<?> stop() {
    List<Future<?>> closing = new ArrayList<>();
    consumers.forEach(c -> closing.add(c.unregister()));
    lag.stop();
    janitor.stop();
    vertx.cancelTimer(idleTimer);
    // every record a share consumer holds goes back to the broker, for another node's workers
    closing.addAll(slots.closeAll());
    return Future.join(closing).eventually(() -> admin.close()
        .compose(x -> callers == null ? Future.succeededFuture() : callers.close())
        .compose(x -> changelog == null ? Future.succeededFuture() : Pools.closeChangelog(changelog, pool)));
  }

  private Future<ToolReply> run(ToolRequest request) {
    if (request.arguments().getValue("consumer") instanceof String consumer) {
      janitor.used(store.groupId(request.caller().id(), consumer));  // whatever the call's outcome: its caller uses the name
    }
    return switch (request.tool()) {
      case ToolCatalog.EVENTS_NEXT -> leases.next(request).compose(reply -> contexts.enrich(request, reply));
      case ToolCatalog.EVENTS_ACK, ToolCatalog.EVENTS_NACK, Actions.LEASE_HELD -> acks.route(request);
      case ToolCatalog.EVENTS_STATUS -> status.status(request);
      case ToolCatalog.EVENTS_SEEK -> seek.seek(request);
      default -> Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no events tool named " + request.tool() + "."));
    };
  }
}
