package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.database.toolserver.RunningRequests;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpClients;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/**
 * A node of the cluster dies (kill -9) while callers wait on it. Node A, in the test's JVM, runs
 * the gateway, the command and the changelog role; node B, in a JVM of its own, runs a gateway and
 * the query role; node C, in the test's JVM, runs the query role too. Slow reads sent through A
 * run on B or C, as the event bus picks. When B dies, the reads it ran are answered UNAVAILABLE,
 * retriable, within about a second of A learning that B left (far inside
 * {@code bus.send-timeout-ms}), and those C runs end as they would have. Once C has stopped too,
 * a read or a subscription is refused as retriable, saying that no query service runs. The
 * official TypeScript SDK's client, subscribed through A all along, keeps its subscription and
 * hears the next change; and A logs no ERROR for a peer loss it expects.
 */
@ExtendWith(InfraExtension.class)
class NodeLossClusterIT {

  /** Far above what a call may take once B left: no call may be answered by this. */
  static final long BUS_TIMEOUT_MS = 60_000;
  static final String ROW = "tidemark://row/customers/7";
  /** How long each slow read sleeps: longer than the kill and the answers take, short enough to wait for on C. */
  static final int SLEEP_SECONDS = 15;

  @Test
  void callsOnALostNodeEndAtOnceOthersGoOnAndASubscriberThroughAnotherGatewayHearsTheNextChange(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    McpClients.install();
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(3);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
    Map<ConfigKey, String> va = TestNodes.config(infra, cluster, ports[0], members, "gateway,command,changelog");
    va.put(ConfigKey.NODE_ID, "node-a");
    va.put(ConfigKey.BUS_SEND_TIMEOUT_MS, String.valueOf(BUS_TIMEOUT_MS));
    Map<ConfigKey, String> vb = TestNodes.config(infra, cluster, ports[1], members, "gateway,query");
    Map<ConfigKey, String> vc = TestNodes.config(infra, cluster, ports[2], members, "query");
    vc.put(ConfigKey.NODE_ID, "node-c");
    for (Map<ConfigKey, String> queryNode : List.of(vb, vc)) {
      queryNode.put(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, String.valueOf(2 * SLEEP_SECONDS * 1000));
    }
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    TidemarkNode a = TestNodes.startCaughtUp(va);
    TidemarkNode[] c = {TestNodes.start(vc)};
    ExecutorService callers = Executors.newCachedThreadPool();
    try (ChildNode b = new ChildNode("node-loss-b", vb, List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"))) {
      b.start().awaitReady(Duration.ofSeconds(120));
      Await.that("A to see B and C", Duration.ofSeconds(30), () -> a.clusterSize() == 3);
      try (McpHttpClient probe = TestNodes.connect(a, TestNodes.READ_ONLY_TOKEN)) {
        // B reads its signing keys once it is ready: until then its reads are UNAVAILABLE
        Await.that("the query role of B and C to serve A's reads", Duration.ofSeconds(60), () -> IntStream.range(0, 8)
            .allMatch(i -> !probe.callTool("describe_table", new JsonObject().put("table", "customers")).containsKey("isError")));
      }

      try (McpClients.Running sdk = McpClients.start(List.of("sdk-client.mjs", "hold", TestNodes.mcpUrl(a), ROW, TestNodes.READ_ONLY_TOKEN))) {
        sdk.awaitLine("\"subscribed\"", Duration.ofSeconds(60));
        // the SDK opens its GET stream beside the subscribe: changes until the first is heard
        Await.that("the SDK client to hear a change before the loss", Duration.ofSeconds(30), () -> {
          change(infra, "before the loss");
          return heard(sdk, Duration.ofSeconds(1));
        });

        // slow reads through A until both B and C run at least one; C's own count says which ran there
        List<Future<JsonObject>> onB = new ArrayList<>();
        List<Future<JsonObject>> onC = new ArrayList<>();
        for (int i = 0; onB.isEmpty() || onC.isEmpty(); i++) {
          assertTrue(i < 16, "16 reads, and still not one on each of B and C: " + onB.size() + " on B, " + onC.size() + " on C");
          int runningOnC = RunningRequests.count(c[0].vertx());
          long sleeping = sleeping(infra);
          Future<JsonObject> read = callers.submit(() -> {
            try (McpHttpClient reader = TestNodes.connect(a, TestNodes.READ_ONLY_TOKEN)) {
              return reader.callTool("query", new JsonObject().put("sql", "SELECT pg_sleep(" + SLEEP_SECONDS + ")"));
            }
          });
          Await.that("read " + i + " to run", Duration.ofSeconds(30), () -> sleeping(infra) > sleeping);
          (RunningRequests.count(c[0].vertx()) > runningOnC ? onC : onB).add(read);
        }

        logged.start();
        root.addAppender(logged);
        long killed = System.nanoTime();
        b.kill();
        long[] left = {0};
        Await.that("A to learn that B left", Duration.ofSeconds(30), () -> a.clusterSize() == 2 && (left[0] = System.nanoTime()) > 0);
        for (Future<JsonObject> read : onB) {
          JsonObject result = read.get(BUS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
          long answered = System.nanoTime();
          System.out.printf("[node-loss] B left %.2f s after the kill (as A polls it); a read it ran was answered %.2f s after the kill%n",
              (left[0] - killed) / 1e9, (answered - killed) / 1e9);
          assertEquals(true, result.getBoolean("isError"), result::encode);
          JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
          assertEquals("UNAVAILABLE", error.getString("code"), error::encode);
          assertEquals(true, error.getBoolean("retriable"), error::encode);
          assertTrue(error.getString("message").contains("left the cluster"), error::encode);
          assertTrue(answered - left[0] < TimeUnit.SECONDS.toNanos(2),
              "answered within about a second of the membership change, not at bus.send-timeout-ms: " + (answered - left[0]) / 1_000_000 + " ms");
        }
        for (Future<JsonObject> read : onC) {
          JsonObject result = read.get(BUS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
          assertEquals(null, result.getValue("isError"), () -> "a read C ran ends as it would have: " + result.encode());
        }
        assertTrue(readiness(a).startsWith("200"), "A is ready without B");

        TestNodes.stop(c[0]);
        c[0] = null;
        Await.that("A to see C leave", Duration.ofSeconds(30), () -> a.clusterSize() == 1);
        try (McpHttpClient reader = TestNodes.connect(a, TestNodes.READ_ONLY_TOKEN)) {
          JsonObject refused = ToolResults.error(reader, "query", new JsonObject().put("sql", "SELECT 1"), "UNAVAILABLE");
          assertTrue(refused.getString("message").contains("No query service is running"), refused::encode);
          JsonObject subscribe = reader.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/orders"));
          JsonObject rpcError = subscribe.getJsonObject("error");
          assertNotNull(rpcError, "a subscription no query service can check is refused: " + subscribe.encode());
          assertEquals(-32603, rpcError.getInteger("code"), subscribe::encode);
          assertTrue(rpcError.getString("message").contains("No query service is running"), subscribe::encode);
          assertEquals(new JsonObject().put("code", "UNAVAILABLE").put("retriable", true), rpcError.getJsonObject("data"), subscribe::encode);
        }

        change(infra, "after the loss");
        assertTrue(heard(sdk, Duration.ofSeconds(30)), () -> "the SDK client hears the change made after the loss: " + sdk.output());
        sdk.send("end");
        assertEquals(0, sdk.awaitExit(Duration.ofSeconds(30)), sdk.output());
        assertTrue(sdk.output().contains("\nOK"), sdk.output());
      }
      root.detachAppender(logged);
      List<String> errors = logged.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
          .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : " " + e.getThrowableProxy().getMessage()))
          .toList();
      assertEquals(List.of(), errors, "the survivors log no ERROR for a peer loss they expect");
    } finally {
      root.detachAppender(logged);
      callers.shutdownNow();
      TestNodes.stop(c[0]);
      TestNodes.stop(a);
    }
  }

  /** Whether the SDK client reported a notification within {@code timeout}. */
  private static boolean heard(McpClients.Running sdk, Duration timeout) {
    try {
      sdk.awaitLine("\"updated\"", timeout);
      return true;
    } catch (AssertionError notYet) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void change(SharedInfra infra, String note) {
    try (Connection c = TestNodes.jdbc(infra)) {
      c.createStatement().execute("UPDATE customers SET notes = '" + note + " " + System.nanoTime() + "' WHERE id = 7");
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static long sleeping(SharedInfra infra) {
    try (Connection c = TestNodes.jdbc(infra); ResultSet rs = c.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query ILIKE '%pg_sleep(" + SLEEP_SECONDS + ")%' AND pid <> pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String readiness(TidemarkNode node) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.opsPort() + "/health/ready"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    return r.statusCode() + " " + r.body();
  }
}
