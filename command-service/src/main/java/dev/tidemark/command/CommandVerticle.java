package dev.tidemark.command;

import dev.tidemark.command.impl.Causes;
import dev.tidemark.command.impl.ChangeRunner;
import dev.tidemark.command.impl.DeleteRowsTool;
import dev.tidemark.command.impl.ExecuteTool;
import dev.tidemark.command.impl.InsertRowsTool;
import dev.tidemark.command.impl.MigrateTool;
import dev.tidemark.command.impl.ProposalStore;
import dev.tidemark.command.impl.TaskRows;
import dev.tidemark.database.CatalogCache;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.Pools;
import dev.tidemark.database.RunningStatements;
import dev.tidemark.command.impl.RestoreRowsTool;
import dev.tidemark.command.impl.TransactionTool;
import dev.tidemark.command.impl.UndoTransactionTool;
import dev.tidemark.command.impl.UpdateRowsTool;
import dev.tidemark.contract.Actions;
import dev.tidemark.contract.Addresses;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.toolserver.ServiceDrain;
import dev.tidemark.database.toolserver.ToolServer;
import dev.tidemark.telemetry.tracing.Traces;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command role for one database: runs every change tool (plan, confirm, commit) as the
 * caller's PostgreSQL role, and prunes idempotency keys older than their retention.
 */
public final class CommandVerticle extends VerticleBase {

  private static final Logger LOG = LoggerFactory.getLogger(CommandVerticle.class);
  /** How often every command node deletes idempotency keys past their retention. */
  static final long PRUNE_INTERVAL_MS = 10 * 60 * 1000;

  private final NodeInfo node;
  private final TidemarkConfig config;
  private final Pool pool;
  private CallerPools callers;
  private ChangeRunner runner;
  /** Tidemark's login on the database the changelog is stored in: {@link #pool} itself unless database.changelog-url is set. */
  private Pool store;
  private ProposalStore proposals;
  private TaskRows tasks;
  private MessageConsumer<Object> consumer;
  private MessageConsumer<JsonObject> cancels;
  private MessageConsumer<Object> schemaChanges;
  private final ServiceDrain running = new ServiceDrain();
  private long pruneTimer = -1;
  private final boolean prunes;

  public CommandVerticle(NodeInfo node, TidemarkConfig config, Pool pool) {
    this(node, config, pool, true);
  }

  /**
   * @param prunes whether this instance deletes expired idempotency keys (one instance per node
   *     does; the others would repeat its work)
   */
  public CommandVerticle(NodeInfo node, TidemarkConfig config, Pool pool, boolean prunes) {
    this.node = node;
    this.config = config;
    this.pool = pool;
    this.prunes = prunes;
  }

  @Override
  public Future<?> start() {
    DatabaseConfig db = config.database();
    return KeyRingSource.start(vertx, pool, config.keysRefreshSeconds()).compose(keys -> {
      callers = new CallerPools(vertx, db, keys, CallerPools.Prepared.WRITES);
      CatalogCache catalog = new CatalogCache(pool, db.schemas(), db.catalogCacheMs(), db.statementTimeoutMs());
      FunctionGuard functions = new FunctionGuard(pool, db.reviewedFunctions(), db.catalogCacheMs());
      store = Pools.changelog(vertx, db, pool);
      runner = runner(vertx, config, pool, store, callers, keys, catalog, functions);
      proposals = new ProposalStore(pool);
      tasks = new TaskRows(pool);
      // published by the node's fan-out where it has one; elsewhere each change checks the shape it uses
      schemaChanges = vertx.eventBus().localConsumer(Addresses.schemaChanges(db.name()), msg -> {
        catalog.clear();
        functions.clear();
      });
      if (prunes) {
        pruneTimer = vertx.setPeriodic(1000, PRUNE_INTERVAL_MS, t -> prune());
      }
      consumer = vertx.eventBus().consumer(Addresses.command(config.database().name()), this::onMessage);
      // a cancellation is published to every node of the database: the one that runs the call stops its statement
      cancels = vertx.eventBus().consumer(Addresses.cancel(config.database().name()),
          msg -> RunningStatements.cancel(msg.body().getString("request_id", "")));
      return Future.all(consumer.completion(), cancels.completion());
    });
  }

  /** The change tools of one database, run as their callers on {@code callers}; an approval's, which keeps nothing. */
  static ChangeRunner runner(io.vertx.core.Vertx vertx, TidemarkConfig config, Pool pool, Pool changelog, CallerPools callers,
      KeyRingSource keys, CatalogCache catalog) {
    return runner(vertx, config, pool, changelog, callers, keys, catalog, new FunctionGuard(pool, config.database().reviewedFunctions(), 0));
  }

  /**
   * As above, with the function check whose findings the role keeps. {@code changelog}: Tidemark's
   * login on the database the changelog is stored in, which restore_rows and undo_transaction read.
   */
  static ChangeRunner runner(io.vertx.core.Vertx vertx, TidemarkConfig config, Pool pool, Pool changelog, CallerPools callers,
      KeyRingSource keys, CatalogCache catalog, FunctionGuard functions) {
    DatabaseConfig db = config.database();
    return new ChangeRunner(pool, callers, db, config.command(), new PlanCodec(keys::ring), Map.of(
        ToolCatalog.INSERT_ROWS, new InsertRowsTool(catalog, functions),
        ToolCatalog.UPDATE_ROWS, new UpdateRowsTool(catalog, functions),
        ToolCatalog.DELETE_ROWS, new DeleteRowsTool(catalog, functions),
        ToolCatalog.EXECUTE, new ExecuteTool(functions),
        ToolCatalog.TRANSACTION, new TransactionTool(functions),
        ToolCatalog.RESTORE_ROWS, new RestoreRowsTool(db, pool, changelog, keys::ring, functions),
        ToolCatalog.UNDO_TRANSACTION, new UndoTransactionTool(db, pool, changelog, functions),
        ToolCatalog.MIGRATE, new MigrateTool(db, functions)), new Causes(vertx, db.name(), config.busSendTimeoutMs()), functions);
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(pruneTimer);
    Future<?> closed = callers == null ? Future.succeededFuture() : Future.join(callers.close(), Pools.closeChangelog(store, pool));
    Future<?> unheard = cancels == null ? Future.succeededFuture() : Future.all(cancels.unregister(), schemaChanges.unregister());
    return consumer == null ? closed : Future.all(consumer.unregister(), unheard).compose(x -> closed);
  }

  private void prune() {
    pool.preparedQuery(ChangeRunner.PRUNE_SQL).execute(Tuple.of((int) Math.min(config.command().idempotencyRetentionHours(), Integer.MAX_VALUE)))
        .onSuccess(rows -> {
          if (rows.rowCount() > 0) {
            LOG.info("pruned {} idempotency keys older than {} h", rows.rowCount(), config.command().idempotencyRetentionHours());
          }
        })
        .onFailure(err -> LOG.warn("pruning idempotency keys failed: {}", err.getMessage()));
    // tasks past their time: no gateway reads them any more
    pool.query(TaskRows.PRUNE_SQL).execute()
        .onFailure(err -> LOG.warn("pruning expired tasks failed: {}", err.getMessage()));
  }

  /** Stops taking change requests and waits up to {@code timeoutMillis} for those running; see {@link ServiceDrain}. */
  public Future<Integer> drain(long timeoutMillis) {
    return running.drain(context, consumer, timeoutMillis);
  }

  private void onMessage(Message<Object> msg) {
    running.track(ToolServer.answer(msg, node, pool, Traces.tracer(vertx),
        request -> switch (request.tool()) {
          case Actions.PROPOSAL_STATE -> proposals.stateFor(request);
          case Actions.TASK_STORE -> tasks.answer(request);
          default -> runner.run(request);
        }, LOG));
  }
}
