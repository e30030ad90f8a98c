package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NodeDeploymentsTest {

  /** A part whose stop never finishes, as a stop waiting on a future nobody completes. */
  static final class NeverStops extends VerticleBase {
    @Override
    public Future<?> stop() {
      return Promise.promise().future();
    }
  }

  static final class Stops extends VerticleBase {
  }

  @Test
  void aPartThatNeverStopsIsNamedWhileTheStopWaitsAndLeftBehindAtTheLimit() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      NodeDeployments deployed = new NodeDeployments(vertx, 1_500);
      deployed.deploy(new NeverStops(), "orders").await(10, TimeUnit.SECONDS);
      deployed.deploy(new Stops(), null).await(10, TimeUnit.SECONDS);
      long began = System.nanoTime();
      Future<Void> stopped = deployed.stopAll();
      Set<String> waitingFor = Set.of("NeverStops of database orders");
      assertTrue(Await.until(() -> deployed.stillStopping().equals(waitingFor), Duration.ofSeconds(1)),
          "the part still stopping, by name: " + deployed.stillStopping());
      stopped.await(10, TimeUnit.SECONDS);
      long tookMs = (System.nanoTime() - began) / 1_000_000;
      assertTrue(tookMs >= 1_400, "the stop waited for the part up to the limit: " + tookMs + " ms");
      assertEquals(Set.of(), deployed.stillStopping());
      assertEquals(Set.of(), vertx.deploymentIDs(), "both parts are undeployed");
    } finally {
      vertx.close().await(10, TimeUnit.SECONDS);
    }
  }
}
