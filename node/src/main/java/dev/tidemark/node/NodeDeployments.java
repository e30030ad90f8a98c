package dev.tidemark.node;

import io.vertx.core.Context;
import io.vertx.core.Deployable;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verticles a node deployed, by name, so that its stop can say which of them it is still
 * waiting for: a stop that never ends is otherwise a future nobody completed, which no thread
 * dump shows.
 */
final class NodeDeployments {

  private static final Logger LOG = LoggerFactory.getLogger(NodeDeployments.class);
  /** How often a stop that is still waiting names what it waits for. */
  static final long STOP_REPORT_MS = 5_000;
  /**
   * How long one part's stop may take before the node's stop goes on without it: with the
   * cluster's leave ({@code ClusterSetup}, at most 10 s) it fits the 20 s that {@code tidemark serve}
   * gives a stop after its drain.
   */
  static final long STOP_LIMIT_MS = 10_000;

  private final Vertx vertx;
  private final Map<String, String> names = new ConcurrentHashMap<>();
  private final Set<String> stopping = ConcurrentHashMap.newKeySet();

  private final long stopLimitMs;

  NodeDeployments(Vertx vertx) {
    this(vertx, STOP_LIMIT_MS);
  }

  NodeDeployments(Vertx vertx, long stopLimitMs) {
    this.vertx = vertx;
    this.stopLimitMs = stopLimitMs;
  }

  /** @param database the database it serves, or null for a part of the node as a whole */
  Future<String> deploy(Deployable verticle, String database) {
    String name = database == null ? verticle.getClass().getSimpleName() : verticle.getClass().getSimpleName() + " of database " + database;
    return named(vertx.deployVerticle(bounded(verticle, name)), name);
  }

  Future<String> deploy(Supplier<? extends Deployable> verticles, DeploymentOptions options, String name) {
    return named(vertx.deployVerticle(() -> bounded(verticles.get(), name), options), name);
  }

  private Future<String> named(Future<String> deployed, String name) {
    return deployed.onSuccess(id -> names.put(id, name));
  }

  /**
   * {@code verticle}, whose stop may take at most {@link #STOP_LIMIT_MS} (or what a test sets): past it the node's stop
   * goes on without it, with an error naming it, so that a part that never finishes stopping
   * cannot keep the process from ending or its node from leaving the cluster.
   */
  private Deployable bounded(Deployable verticle, String name) {
    return new Deployable() {
      @Override
      public Future<?> deploy(Context context) throws Exception {
        return verticle.deploy(context);
      }

      @Override
      public Future<?> undeploy(Context context) throws Exception {
        return verticle.undeploy(context).timeout(stopLimitMs, TimeUnit.MILLISECONDS).recover(err -> {
          if (err instanceof java.util.concurrent.TimeoutException) {
            LOG.error("{} did not stop within {} ms; the node stops without waiting for it", name, stopLimitMs);
            return Future.succeededFuture();
          }
          return Future.failedFuture(err);
        });
      }
    };
  }

  /**
   * Stops every verticle, all at once as Vert.x's own close would, and logs every
   * {@link #STOP_REPORT_MS} which of them have not finished. Completes when all have (or were left
   * behind at {@link #STOP_LIMIT_MS}); it fails when a stop failed, after every other one finished.
   */
  Future<Void> stopAll() {
    List<Future<Void>> stops = new ArrayList<>();
    names.forEach((id, name) -> {
      stopping.add(name);
      stops.add(vertx.undeploy(id)
          .onFailure(err -> LOG.warn("{} did not stop cleanly: {}", name, err.toString()))
          .eventually(() -> {
            stopping.remove(name);
            return Future.succeededFuture();
          }));
    });
    long report = vertx.setPeriodic(STOP_REPORT_MS, t -> LOG.warn("the node's stop is still waiting for {}", stillStopping()));
    return Future.join(stops).eventually(() -> {
      vertx.cancelTimer(report);
      return Future.succeededFuture();
    }).mapEmpty();
  }

  /** The verticles whose stop has not finished, by name. */
  Set<String> stillStopping() {
    return new TreeSet<>(stopping);
  }
}
