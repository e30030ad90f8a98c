package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.RawHttp;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node with two gateway instances, one per event loop, on one port: connections are served by
 * both loops, and every limit of the node holds across them (connections, each caller's
 * concurrent calls, the slowing of failed credential checks), as do a revocation, a drain and
 * notifications, which reach the streams of both loops. Which loop took a connection is read from
 * the node's own per-loop count of connections, {@code tidemark_gateway_connections_total}.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayInstancesIT {

  private static final int MAX_CONNECTIONS = 6;
  private static final String TABLE = "it_gateway_loops";
  private static final Pattern CONNECTIONS = Pattern.compile("^tidemark_gateway_connections_total\\{loop=\"([^\"]+)\"} (\\S+)", Pattern.MULTILINE);

  private TidemarkNode node;
  private SharedInfra infra;

  /** Something a test opened, with the loop whose instance took its connection. */
  private record OnLoop<T>(T opened, String loop) {}

  /** Two loops and two instances, whatever the machine: the defaults would give one of each per core. */
  private static Map<ConfigKey, String> twoInstances() {
    Map<ConfigKey, String> v = new HashMap<>();
    v.put(ConfigKey.NODE_EVENT_LOOPS, "2");
    v.put(ConfigKey.NODE_GATEWAY_INSTANCES, "2");
    return v;
  }

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    this.infra = infra;
    TestNodes.prepareDatabase(infra);
    try (Connection c = TestNodes.jdbc(infra)) {
      c.createStatement().execute("DROP TABLE IF EXISTS public." + TABLE);
      c.createStatement().execute("CREATE TABLE public." + TABLE + " (id int PRIMARY KEY, v int NOT NULL DEFAULT 0)");
      c.createStatement().execute("INSERT INTO public." + TABLE + " VALUES (1, 0)");
      c.createStatement().execute("GRANT SELECT ON public." + TABLE + " TO tidemark_reader");
    }
    Map<ConfigKey, String> v = twoInstances();
    v.put(ConfigKey.HTTP_MAX_CONNECTIONS, String.valueOf(MAX_CONNECTIONS));
    v.put(ConfigKey.AUTH_MAX_CONCURRENT_CALLS, "1");
    v.put(ConfigKey.AUTH_MAX_QUEUED_CALLS, "0");
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", v);
  }

  @AfterAll
  void stop() {
    TestNodes.stop(node);
  }

  // ---- which loop took a connection ----

  /** The connections each loop's gateway instance took so far, by loop. */
  private static Map<String, Double> connectionsByLoop(TidemarkNode node) {
    Map<String, Double> out = new TreeMap<>();
    Matcher m = CONNECTIONS.matcher(MetricsIT.scrape(node));
    while (m.find()) {
      out.put(m.group(1), Double.parseDouble(m.group(2)));
    }
    return out;
  }

  /** The loops whose count rose between two readings, and by how much. */
  private static Map<String, Double> rise(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> out = new TreeMap<>();
    after.forEach((loop, n) -> {
      double more = n - before.getOrDefault(loop, 0.0);
      if (more > 0) {
        out.put(loop, more);
      }
    });
    return out;
  }

  /** {@code open}'s result, with the loop of the one connection it opened. */
  private static <T> OnLoop<T> onLoop(TidemarkNode node, Supplier<T> open) {
    Map<String, Double> before = connectionsByLoop(node);
    T opened = open.get();
    Map<String, Double> rose = rise(before, connectionsByLoop(node));
    assertEquals(1, rose.size(), "one connection on one loop: " + rose);
    assertEquals(1.0, rose.values().iterator().next(), "one connection: " + rose);
    return new OnLoop<>(opened, rose.keySet().iterator().next());
  }

  /**
   * Opens with {@code open} until both loops hold one of what it opens (Vert.x hands connections to
   * the instances in turn, so two or three are enough); the others are closed.
   */
  private static <T extends AutoCloseable> List<OnLoop<T>> onBothLoops(TidemarkNode node, Supplier<T> open) throws Exception {
    Map<String, OnLoop<T>> byLoop = new TreeMap<>();
    for (int i = 0; i < 6 && byLoop.size() < 2; i++) {
      OnLoop<T> o = onLoop(node, open);
      if (byLoop.putIfAbsent(o.loop(), o) != null) {
        o.opened().close();
      }
    }
    assertEquals(2, byLoop.size(), "connections reach both loops: " + byLoop.keySet());
    return List.copyOf(byLoop.values());
  }

  // ---- connections ----

  @Test
  @Order(1) // first: a connection another test closed may still hold its slot for a moment
  void connectionsAreServedByBothLoopsAndTheConnectionCapIsTheNodes() throws Exception {
    List<Socket> held = new ArrayList<>();
    try {
      Map<String, Double> before = connectionsByLoop(node);
      for (int i = 0; i < MAX_CONNECTIONS; i++) {
        Socket s = initializeOn(node, TestNodes.READ_ONLY_TOKEN);
        held.add(s);
        String head = RawHttp.readHead(s);
        assertTrue(head.startsWith("HTTP/1.1 200"), head);
      }
      Map<String, Double> rose = rise(before, connectionsByLoop(node));
      assertEquals(2, rose.size(), "both loops took some of the " + MAX_CONNECTIONS + " connections: " + rose);
      assertEquals((double) MAX_CONNECTIONS, rose.values().stream().mapToDouble(Double::doubleValue).sum(), rose::toString);

      // one more, on whichever loop: the cap counts the connections of both
      try (Socket past = initializeOn(node, TestNodes.READ_ONLY_TOKEN)) {
        String head = RawHttp.readHead(past);
        assertTrue(head.startsWith("HTTP/1.1 503"), "the cap is the node's, not one per loop: " + head);
        assertTrue(head.toLowerCase().contains("connection: close"), head);
      }
      // a connection that closes, on either loop, makes room on any
      held.remove(0).close();
      assertTrue(Await.until(() -> {
        try (Socket again = initializeOn(node, TestNodes.READ_ONLY_TOKEN)) {
          return RawHttp.readHead(again).startsWith("HTTP/1.1 200");
        } catch (IOException e) {
          return false;
        }
      }, Duration.ofSeconds(10)), "a closed connection's slot is given back");
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  /** A keep-alive connection that sent an initialize with {@code token}; its answer is read by the caller. */
  private static Socket initializeOn(TidemarkNode node, String token) throws IOException {
    String body = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "initialize").put("params", new JsonObject()
        .put("protocolVersion", "2025-11-25").put("capabilities", new JsonObject())
        .put("clientInfo", new JsonObject().put("name", "gateway-instances-it").put("version", "1"))).encode();
    Socket s = new Socket("127.0.0.1", node.httpPort());
    s.setSoTimeout(10_000);
    String request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\n"
        + "Authorization: Bearer " + token + "\r\nContent-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body;
    s.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
    s.getOutputStream().flush();
    return s;
  }

  // ---- calls per caller ----

  @Test
  void aCallersCapOfOneHoldsAcrossLoopsWhileOtherCallersAreServed() throws Exception {
    Map<String, Double> before = connectionsByLoop(node);
    CompletableFuture<JsonObject> sleeping = CompletableFuture.supplyAsync(
        () -> query(TestNodes.READ_WRITE_TOKEN, "SELECT pg_sleep(3), 'gateway-instances-it' AS tag"));
    assertTrue(Await.until(() -> sleepsRunning() == 1, Duration.ofSeconds(20)), "the first call runs");
    Map<String, Double> rose = rise(before, connectionsByLoop(node));
    assertEquals(1, rose.size(), rose::toString);
    String slowLoop = rose.keySet().iterator().next();
    // the same caller, on a connection of its own, until one lands on the other loop
    String otherLoop = null;
    for (int i = 0; i < 6 && otherLoop == null; i++) {
      OnLoop<JsonObject> refused = onLoop(node, () -> query(TestNodes.READ_WRITE_TOKEN, "SELECT 1 AS one"));
      assertEquals(true, refused.opened().getValue("isError"), "the cap of one holds on loop " + refused.loop() + ": " + refused.opened());
      JsonObject error = refused.opened().getJsonObject("structuredContent").getJsonObject("error");
      assertEquals("UNAVAILABLE", error.getString("code"), error::encode);
      assertEquals(1, error.getInteger("max_concurrent_calls"), error::encode);
      otherLoop = refused.loop().equals(slowLoop) ? null : refused.loop();
    }
    assertNotNull(otherLoop, "a call of the same caller reached the other loop, and was refused there");
    // another caller has a cap of its own
    JsonObject served = query(TestNodes.READ_ONLY_TOKEN, "SELECT 1 AS one");
    assertEquals(null, served.getValue("isError"), served.encode());
    JsonObject slept = sleeping.get(30, TimeUnit.SECONDS);
    assertEquals(null, slept.getValue("isError"), slept.encode());
    // the slot freed on the first loop serves the caller on either
    JsonObject after = query(TestNodes.READ_WRITE_TOKEN, "SELECT 2 AS two");
    assertEquals(null, after.getValue("isError"), after.encode());
  }

  /** A stateless 2026-07-28 query on a connection of its own; its result. */
  private JsonObject query(String token, String sql) {
    JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call").put("params", new JsonObject()
        .put("name", "query").put("arguments", new JsonObject().put("sql", sql))
        .put("_meta", new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
            .put("io.modelcontextprotocol/clientCapabilities", new JsonObject())));
    try {
      RawHttp.Response r = RawHttp.exchange(node.httpPort(), "POST", "/mcp", List.of(new String[] {"Authorization", "Bearer " + token},
          new String[] {"Content-Type", "application/json"}, new String[] {"Accept", "application/json"},
          new String[] {"MCP-Protocol-Version", "2026-07-28"}, new String[] {"Mcp-Method", "tools/call"}, new String[] {"Mcp-Name", "query"}),
          call.encode().getBytes(StandardCharsets.UTF_8), false, -1, 30_000);
      assertEquals(200, r.status(), r.bodyText());
      return new JsonObject(r.bodyText()).getJsonObject("result");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private long sleepsRunning() {
    try (Connection conn = TestNodes.jdbc(infra); java.sql.ResultSet rs = conn.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(3), ''gateway-instances-it''%'")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- failed credentials ----

  @Test
  void failedCredentialChecksOnBothLoopsAreSlowedDownAsOneGuesser() throws Exception {
    Map<String, Double> before = connectionsByLoop(node);
    long lastMillis = 0;
    for (int i = 1; i <= 4; i++) {
      long started = System.nanoTime();
      // a new connection each: Vert.x hands them to the instances in turn
      RawHttp.Response r = RawHttp.exchange(node.httpPort(), "POST", "/mcp", List.of(new String[] {"Authorization", "Bearer tmk_wrongGuess" + i},
              new String[] {"Content-Type", "application/json"}, new String[] {"Accept", "application/json"}),
          "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}".getBytes(StandardCharsets.UTF_8), false, -1, 20_000);
      lastMillis = (System.nanoTime() - started) / 1_000_000;
      assertEquals(401, r.status(), r.bodyText());
    }
    assertEquals(2, rise(before, connectionsByLoop(node)).size(), "the guesses reached both loops");
    // the 4th failure from one source in a minute waits 4 x 250 ms; counted per loop it would be the 2nd on its loop
    assertTrue(lastMillis >= 4 * 250, "the 4th guess waited " + lastMillis + " ms");
  }

  // ---- revocation, drain, notifications ----

  @Test
  void aRevokedTokensStreamsEndOnBothLoops(@TempDir Path dir) throws Exception {
    Path config = TestNodes.cliConfig(infra, dir);
    String name = "it-loops-" + UUID.randomUUID().toString().substring(0, 8);
    Cli.Run created = Cli.run("token", "create", "--name", name, "--role", "tidemark_reader", "--read-only", "--config", config.toString());
    assertEquals(0, created.code(), created.err());
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    String token = m.group(1);
    List<OnLoop<SseStream>> streams = onBothLoops(node, () -> listen(node, token, List.of()));
    try {
      Cli.Run revoked = Cli.run("token", "revoke", "--name", name, "--config", config.toString());
      assertEquals(0, revoked.code(), revoked.err());
      for (OnLoop<SseStream> s : streams) {
        assertTrue(Await.until(s.opened()::ended, Duration.ofSeconds(5)), "the stream on loop " + s.loop() + " ends");
        JsonObject end = s.opened().await("response", 1_000);
        assertNotNull(end, "with an error, on loop " + s.loop());
        assertEquals(-32600, end.getJsonObject("error").getInteger("code"), end::encode);
        assertTrue(end.getJsonObject("error").getString("message").contains("revoked"), end::encode);
      }
    } finally {
      streams.forEach(s -> s.opened().close());
    }
  }

  @Test
  void aChangeIsNotifiedToSubscribersOnBothLoops() throws Exception {
    String uri = "tidemark://table/public." + TABLE;
    List<OnLoop<SseStream>> streams = onBothLoops(node, () -> listen(node, TestNodes.READ_ONLY_TOKEN, List.of(uri)));
    try {
      try (Connection c = TestNodes.jdbc(infra)) {
        c.createStatement().execute("UPDATE public." + TABLE + " SET v = v + 1 WHERE id = 1");
      }
      for (OnLoop<SseStream> s : streams) {
        JsonObject note = s.opened().await("notifications/resources/updated", 20_000);
        assertNotNull(note, "the subscriber on loop " + s.loop() + " hears of the change");
        assertEquals(uri, note.getJsonObject("params").getString("uri"), note::encode);
      }
    } finally {
      streams.forEach(s -> s.opened().close());
    }
  }

  @Test
  void aDrainEndsTheStreamsOfBothLoopsAndBothRefuseNewRequests() throws Exception {
    TidemarkNode draining = TestNodes.startAlone(infra, "gateway", twoInstances());
    try {
      List<OnLoop<SseStream>> streams = onBothLoops(draining, () -> listen(draining, TestNodes.READ_ONLY_TOKEN, List.of()));
      try {
        TestNodes.await(draining.drain().toCompletionStage().toCompletableFuture());
        for (OnLoop<SseStream> s : streams) {
          assertTrue(Await.until(s.opened()::ended, Duration.ofSeconds(5)), "the stream on loop " + s.loop() + " ends");
          JsonObject end = s.opened().await("response", 1_000);
          assertNotNull(end, "with the drain's error, on loop " + s.loop());
          assertEquals(-32010, end.getJsonObject("error").getInteger("code"), end::encode);
          assertTrue(s.opened().text().contains("retry: "), "and a hint to reconnect: " + s.opened().text());
        }
        Map<String, Double> before = connectionsByLoop(draining);
        for (int i = 0; i < 2; i++) {
          try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(draining), TestNodes.READ_ONLY_TOKEN)) {
            McpHttpClient.Reply reply = c.post(c.request("initialize", new JsonObject()));
            assertEquals(503, reply.status(), reply.body());
          }
        }
        assertEquals(2, rise(before, connectionsByLoop(draining)).size(), "both loops refused");
      } finally {
        streams.forEach(s -> s.opened().close());
      }
    } finally {
      TestNodes.stop(draining);
    }
  }

  /** A 2026-07-28 listen stream of {@code uris} and of list changes, once acknowledged. */
  private static SseStream listen(TidemarkNode node, String token, List<String> uris) {
    JsonObject request = TestNodes.listenRequest("loops-" + UUID.randomUUID(), uris);
    request.getJsonObject("params").getJsonObject("notifications").put("resourcesListChanged", true);
    MultiMap headers = TestNodes.listenHeaders(token);
    SseStream s = SseStream.open(HttpMethod.POST, TestNodes.mcpUrl(node), headers, request.toBuffer());
    assertEquals(200, s.status());
    try {
      assertNotNull(s.await("notifications/subscriptions/acknowledged", 15_000), "the listen stream is open");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return s;
  }
}
