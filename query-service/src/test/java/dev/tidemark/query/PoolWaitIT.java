package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Overload never turns into a hang: with one connection per pool, a call that finds it busy for
 * longer than database.pool-wait-ms fails retriably with UNAVAILABLE, says it waited for a
 * connection, and has run nothing; the call that held the connection finishes, and the next one
 * runs.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PoolWaitIT {

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    harness = QueryRole.start(infra, Map.of(ConfigKey.DATABASE_POOL_SIZE, "1",
        ConfigKey.DATABASE_POOL_WAIT_MS, "300", ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "2500"));
  }

  private long running(String sql) {
    return TestDatabases.running(infra, ServiceHarness.DATABASE, sql);
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  @Test
  void aCallThatFindsEveryConnectionBusyFailsRetriablyNamingTheWaitAndRunsNothing() throws Exception {
    // holds the read-write role's only connection of the resetting pool for 2 s
    CompletableFuture<ToolReply> held = CompletableFuture.supplyAsync(
        () -> harness.call(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELECT pg_sleep(2) AS held")));
    Await.until(() -> running("pg_sleep(2) AS held") == 1, Duration.ofSeconds(10));
    long started = System.nanoTime();
    JsonObject error = harness.error(ServiceHarness.WRITER, "describe_table", new JsonObject().put("table", "customers"), "UNAVAILABLE");
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(true, error.getBoolean("retriable"));
    assertEquals("connection", error.getString("waited_for"));
    assertTrue(error.getString("message").contains("did not start"), error.getString("message"));
    assertTrue(millis < 1_800, "refused after " + millis + " ms, before the busy call ended");

    ToolReply first = held.get(30, TimeUnit.SECONDS);
    assertNull(first.error(), () -> first.toJson().encode());
    // once the connection is free the next call runs
    harness.ok(ServiceHarness.WRITER, "describe_table", new JsonObject().put("table", "customers"));
  }

  @Test
  void aStatementPastItsTimeSaysItWaitedForTheStatement() {
    // the other test's busy call holds the only connection until it ends
    Await.until(() -> running("pg_sleep(2) AS held") == 0, Duration.ofSeconds(10));
    JsonObject error = harness.error(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELECT pg_sleep(30) AS slept"), "TIMEOUT");
    assertEquals("statement", error.getString("waited_for"));
  }
}
