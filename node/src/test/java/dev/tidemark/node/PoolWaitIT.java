package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
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
  private TidemarkNode node;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    TestNodes.prepareDatabase(infra);
    node = TestNodes.startAlone(infra, "gateway,query,command", Map.of(ConfigKey.DATABASE_POOL_SIZE, "1",
        ConfigKey.DATABASE_POOL_WAIT_MS, "300", ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "2500"));
  }

  private long running(String sql) {
    try (Connection conn = TestNodes.jdbc(infra);
         PreparedStatement ps = conn.prepareStatement(
             "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, "%" + sql + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  void stop() {
    TestNodes.stop(node);
  }

  @Test
  void aCallThatFindsEveryConnectionBusyFailsRetriablyNamingTheWaitAndRunsNothing() throws Exception {
    try (McpHttpClient holder = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
         McpHttpClient late = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
      holder.initialize();
      late.initialize();
      // holds the read-write role's only connection of the resetting pool for 2 s
      CompletableFuture<JsonObject> held = CompletableFuture.supplyAsync(
          () -> holder.callTool("query", new JsonObject().put("sql", "SELECT pg_sleep(2) AS held")));
      Await.until(() -> running("pg_sleep(2) AS held") == 1, Duration.ofSeconds(10));
      long started = System.nanoTime();
      JsonObject refused = late.callTool("describe_table", new JsonObject().put("table", "customers"));
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      JsonObject error = refused.getJsonObject("structuredContent").getJsonObject("error");
      assertEquals(true, refused.getBoolean("isError"), refused.encode());
      assertEquals("UNAVAILABLE", error.getString("code"));
      assertEquals(true, error.getBoolean("retriable"));
      assertEquals("connection", error.getString("waited_for"));
      assertTrue(error.getString("message").contains("did not start"), error.getString("message"));
      assertTrue(millis < 1_800, "refused after " + millis + " ms, before the busy call ended");
      // the gateway's text says the same as the structured error
      assertTrue(refused.getJsonArray("content").getJsonObject(0).getString("text").contains("UNAVAILABLE"), refused.encode());

      JsonObject first = held.get(30, TimeUnit.SECONDS);
      assertEquals(false, first.getBoolean("isError", false), first.encode());
      JsonObject after = late.callTool("describe_table", new JsonObject().put("table", "customers"));
      assertEquals(false, after.getBoolean("isError", false), "once the connection is free the next call runs: " + after.encode());
    }
  }

  @Test
  void aStatementPastItsTimeSaysItWaitedForTheStatement() {
    // the other test's busy call holds the only connection until it ends
    Await.until(() -> running("pg_sleep(2) AS held") == 0, Duration.ofSeconds(10));
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject result = c.callTool("query", new JsonObject().put("sql", "SELECT pg_sleep(30) AS slept"));
      JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
      assertEquals("TIMEOUT", error.getString("code"), result.encode());
      assertEquals("statement", error.getString("waited_for"));
    }
  }
}
