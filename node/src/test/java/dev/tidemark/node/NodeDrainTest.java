package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Threads;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.healthchecks.CheckResult;
import io.vertx.ext.healthchecks.HealthChecks;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The first half of a node's stop, which a signal, the CLI and a test may each begin, from their own threads. */
class NodeDrainTest {

  private final Vertx vertx = Vertx.vertx();
  private final HealthChecks ready = HealthChecks.create(vertx);

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  void readinessGoesDownAndEveryRoleDrainsWithTheTimeoutEvenWhenOneFails() throws Exception {
    List<Long> asked = new CopyOnWriteArrayList<>();
    Promise<Integer> gateway = Promise.promise();
    LongFunction<Future<Integer>> gatewayDrain = timeout -> {
      asked.add(timeout);
      return gateway.future();
    };
    LongFunction<Future<Integer>> failing = timeout -> {
      asked.add(timeout);
      return Future.failedFuture("the pool closed");
    };
    NodeDrain drain = new NodeDrain("n1", ready, List.of(gatewayDrain, failing));
    Future<Void> drained = drain.run(15_000);
    CheckResult readiness = ready.checkStatus().await(10, TimeUnit.SECONDS);
    assertFalse(readiness.getUp());
    assertEquals(NodeDrain.REASON, readiness.getChecks().get(0).getData().getString("reason"));
    assertEquals(List.of(15_000L, 15_000L), asked);
    assertFalse(drained.isComplete(), "the gateway's calls still run");
    gateway.complete(2);
    drained.await(10, TimeUnit.SECONDS);
  }

  @Test
  void aDrainBegunOnManyThreadsAtOnceRunsOnceAndEachGetsItsFuture() throws Exception {
    int threads = 8;
    List<Long> asked = new CopyOnWriteArrayList<>();
    Promise<Integer> role = Promise.promise();
    NodeDrain drain = new NodeDrain("n1", ready, List.of(timeout -> {
      asked.add(timeout);
      return role.future();
    }));
    List<Future<Void>> runs = Threads.together(threads, () -> drain.run(1_000));
    assertTrue(runs.stream().allMatch(r -> r == runs.get(0)), "one drain, one future");
    assertSame(runs.get(0), drain.run(1_000));
    role.complete(0);
    runs.get(0).await(10, TimeUnit.SECONDS);
    assertEquals(List.of(1_000L), asked, "each role drained once");
    assertEquals(new JsonObject().put("reason", NodeDrain.REASON),
        ready.checkStatus().await(10, TimeUnit.SECONDS).getChecks().get(0).getData());
  }
}
