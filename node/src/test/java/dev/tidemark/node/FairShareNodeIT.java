package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The case of issue 37 on a whole node with the default pool (8 connections, 3 s wait, 5 s
 * statements): one token sends 40 concurrent {@code query} calls of {@code pg_sleep(4.5)}, and
 * another token of the same role keeps being answered while they run. Before each caller had a
 * share of its role's pool, the other token got UNAVAILABLE on 6 of 6 calls.
 */
@ExtendWith(InfraExtension.class)
class FairShareNodeIT {

  private static final int FLOOD = 40;
  private static final int CLIENTS = 8;  // a client keeps 5 connections: 8 of them send all 40 at once

  @TempDir
  Path dir;

  @Test
  void anotherTokenOfTheRoleIsAnsweredWhileOneTokenFloodsItWithSlowQueries(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    // the defaults a node runs with (the tests' nodes have smaller pools)
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query", Map.of(ConfigKey.DATABASE_POOL_SIZE,
        ConfigKey.DATABASE_POOL_SIZE.defaultValue(), ConfigKey.DATABASE_POOL_WAIT_MS, ConfigKey.DATABASE_POOL_WAIT_MS.defaultValue(),
        ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS.defaultValue()));
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> values = TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + port, "query");
    Cli.Run created = Cli.withConfig(dir, values, "token", "create", "--name", "it-flood-" + UUID.randomUUID().toString().substring(0, 8),
        "--role", "tidemark_reader", "--read-only");
    assertEquals(0, created.code(), created.err());
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    String flooderToken = m.group(1);

    ExecutorService threads = Executors.newFixedThreadPool(FLOOD);
    List<McpHttpClient> flooders = new ArrayList<>();
    try (McpHttpClient victim = TestNodes.connect(node, TestNodes.READ_ONLY_TOKEN)) {
      for (int i = 0; i < CLIENTS; i++) {
        flooders.add(TestNodes.connect(node, flooderToken));
      }
      long floodStarted = System.nanoTime();
      List<CompletableFuture<JsonObject>> flood = new ArrayList<>();
      for (int i = 0; i < FLOOD; i++) {
        McpHttpClient c = flooders.get(i % CLIENTS);
        flood.add(CompletableFuture.supplyAsync(() -> c.callTool("query", new JsonObject().put("sql", "SELECT pg_sleep(4.5) AS flood")),
            threads));
      }
      Await.that("the flood running", Duration.ofSeconds(20),
          () -> TestDatabases.running(infra, TestNodes.DATABASE, "pg_sleep(4.5) AS flood") >= 1);

      int calls = 6;
      int answered = 0;
      long slowest = 0;
      List<String> failures = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        long started = System.nanoTime();
        JsonObject result = victim.callTool("query", new JsonObject().put("sql", "SELECT " + i + " AS victim"));
        slowest = Math.max(slowest, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
        if (result.getBoolean("isError", false)) {
          failures.add(result.getJsonObject("structuredContent").encode());
        } else {
          answered++;
        }
      }
      long victimEndedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - floodStarted);

      int ran = 0;
      int refused = 0;
      for (CompletableFuture<JsonObject> f : flood) {
        JsonObject result = f.get(120, TimeUnit.SECONDS);
        if (result.getBoolean("isError", false)) {
          JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
          assertEquals("UNAVAILABLE", error.getString("code"), error::encode);
          assertTrue(error.getBoolean("retriable"));
          assertTrue(error.containsKey("limit"), error::encode);
          refused++;
        } else {
          ran++;
        }
      }
      System.out.printf("fair share on a node: the other token got %d of %d answers, %d ms at the slowest, within %d ms of the flood's"
          + " start; the flood: %d ran, %d refused%n", answered, calls, slowest, victimEndedMs, ran, refused);
      assertTrue(victimEndedMs < 4_500, "the other token's calls were not all made while the flood's first statements ran");
      assertEquals(calls, answered, () -> "the other token was refused during the flood: " + failures);
      assertTrue(slowest < 3_000, "the other token waited " + slowest + " ms");
    } finally {
      flooders.forEach(McpHttpClient::close);
      threads.shutdownNow();
      TestNodes.stop(node);
    }
  }
}
