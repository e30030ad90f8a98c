package dev.tidemark.node;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.HealthChecks;
import io.vertx.ext.healthchecks.Status;
import java.util.List;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first half of a node's graceful stop. Readiness goes down first, so that a load balancer
 * stops sending it traffic; then every role it runs drains at once (the gateway refuses new
 * requests and waits for its calls, the services stop consuming and wait for their statements),
 * each bounded by the same timeout, so that the whole drain never takes longer than that.
 */
final class NodeDrain {

  private static final Logger LOG = LoggerFactory.getLogger(NodeDrain.class);
  static final String READY_CHECK = "drain";
  static final String REASON = "the node is draining before it stops; send traffic to another node";

  private final String nodeId;
  private final HealthChecks ready;
  /** Each role's drain: given the timeout, completes with how many calls or statements it had to cut. */
  private final List<LongFunction<Future<Integer>>> roles;
  private Future<Void> running;

  NodeDrain(String nodeId, HealthChecks ready, List<LongFunction<Future<Integer>>> roles) {
    this.nodeId = nodeId;
    this.ready = ready;
    this.roles = List.copyOf(roles);
  }

  /** Runs once; a second call gets the first one's future. */
  synchronized Future<Void> run(long timeoutMillis) {
    if (running == null) {
      running = start(timeoutMillis);
    }
    return running;
  }

  private Future<Void> start(long timeoutMillis) {
    return Future.<Void>succeededFuture().compose(v -> {
      ready.register(READY_CHECK, p -> p.complete(Status.KO(new JsonObject().put("reason", REASON))));
      LOG.info("node {} drains: readiness is down, new calls are refused; waiting up to {} ms for the calls in flight",
          nodeId, timeoutMillis);
      long started0 = System.nanoTime();
      return Future.join(roles.stream().map(role -> role.apply(timeoutMillis)).toList()).transform(ar -> {
        int cut = ar.succeeded() ? ar.result().<Integer>list().stream().mapToInt(Integer::intValue).sum() : -1;
        long millis = (System.nanoTime() - started0) / 1_000_000;
        if (cut == 0) {
          LOG.info("node {} drained in {} ms", nodeId, millis);
        } else {
          LOG.warn("node {} drained in {} ms; {} calls were still running and were ended", nodeId, millis, cut < 0 ? "some" : cut);
        }
        return Future.<Void>succeededFuture();
      });
    });
  }
}
