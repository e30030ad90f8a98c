package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.RawHttp;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** The HTTP items of the security review: exact loopback, single credential headers, connection pools, per-caller call cap, NUL. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpHardeningIT {

  private static final int FLOOD = 1_010;
  private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";

  private NodeHarness node;
  private String url;
  private final ExecutorService pool = Executors.newFixedThreadPool(24);
  private SharedInfra infra;
  private final java.util.concurrent.atomic.AtomicLong ids = new java.util.concurrent.atomic.AtomicLong();

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command,changelog", Map.of(
        ConfigKey.DATABASE_POOL_SIZE, "16",
        // the gateway's cap per caller is tested here: one caller may take the whole pool (database.caller-share-percent)
        ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "100",
        ConfigKey.AUTH_MAX_CONCURRENT_CALLS, "16",
        ConfigKey.AUTH_MAX_QUEUED_CALLS, "2",
        ConfigKey.AUTH_QUEUE_TIMEOUT_MS, "500"));
    url = node.mcpUrl();
  }

  @AfterAll
  void stop() {
    pool.shutdownNow();
    ServiceHarness.closeAll(node);
  }

  private RawHttp.Response post(List<String[]> headers, String body) throws Exception {
    List<String[]> all = new ArrayList<>(headers);
    all.add(new String[] {"Content-Type", "application/json"});
    all.add(new String[] {"Accept", "application/json"});
    return RawHttp.exchange(node.port(), "POST", "/mcp", all, body.getBytes(StandardCharsets.UTF_8), false, -1, 10_000);
  }

  private static String[] bearer(String token) {
    return new String[] {"Authorization", "Bearer " + token};
  }

  /** The node still serves a caller end to end: a session, a ping and a query. */
  private void stillServes() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      assertEquals(200, c.post(c.request("ping", null)).status());
      JsonObject result = c.callTool("query", new JsonObject().put("sql", "SELECT 1 AS one"));
      assertNull(result.getValue("isError"), result.encode());
    }
  }

  // ---- loopback ----

  @Test
  void originsAndHostsThatOnlyStartLikeLoopbackAreRefused() throws Exception {
    for (String origin : List.of("http://127.0.0.1.evil.example", "http://127.0.0.1.nip.io:8080", "http://localhost.evil.example")) {
      RawHttp.Response r = post(List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Origin", origin}), PING);
      assertEquals(403, r.status(), origin);
      assertTrue(r.bodyText().contains("Origin"), r.bodyText());
    }
    for (String host : List.of("127.0.0.1.nip.io", "127.0.0.1.nip.io:" + node.port(), "localhost.evil.example")) {
      RawHttp.Response r = post(List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Host", host}), PING);
      assertEquals(403, r.status(), host);
      assertTrue(r.bodyText().contains("loopback host"), r.bodyText());
    }
    // not even a host name: the HTTP layer refuses it before Tidemark looks
    assertEquals(400, post(List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Host", "[::1].evil.example"}), PING).status());
    RawHttp.Response ok = post(List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Origin", "http://127.0.0.1:6274"},
        new String[] {"Host", "localhost:" + node.port()}), PING);
    assertEquals(400, ok.status(), "a loopback origin and host pass on to the session check: " + ok.bodyText());
    assertTrue(ok.bodyText().contains("Mcp-Session-Id"), ok.bodyText());
    stillServes();
  }

  // ---- one Authorization, one Origin ----

  @Test
  void twoAuthorizationOrOriginHeadersAre400AndNeitherIsUsed() throws Exception {
    List<List<String[]>> doubled = List.of(
        List.of(bearer(NodeHarness.READ_WRITE_TOKEN), bearer("tmk_someoneElse0000000000000000000000000")),
        List.of(bearer("tmk_someoneElse0000000000000000000000000"), bearer(NodeHarness.READ_WRITE_TOKEN)),
        List.of(bearer(NodeHarness.READ_WRITE_TOKEN), bearer(NodeHarness.READ_WRITE_TOKEN)),
        List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Origin", "http://127.0.0.1"}, new String[] {"Origin", "http://evil.example"}),
        List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Origin", "http://localhost"}, new String[] {"Origin", "http://localhost"}));
    for (List<String[]> headers : doubled) {
      RawHttp.Response r = post(headers, PING);
      assertEquals(400, r.status(), r.bodyText());
      JsonObject error = new JsonObject(r.bodyText()).getJsonObject("error");
      assertEquals(-32600, error.getInteger("code"));
      assertTrue(error.getString("message").startsWith("Send at most one "), error.getString("message"));
      assertFalse(r.bodyText().contains("tmk_"), "the refusal never echoes a token");
      assertEquals("close", r.header("Connection"));
    }
    RawHttp.Response get = RawHttp.exchange(node.port(), "GET", "/mcp",
        List.of(bearer(NodeHarness.READ_WRITE_TOKEN), bearer(NodeHarness.READ_ONLY_TOKEN), new String[] {"Accept", "text/event-stream"}),
        null, false, -1, 10_000);
    assertEquals(400, get.status(), get.bodyText());
    stillServes();
  }

  // ---- unauthenticated connections ----

  @Test
  void a401ClosesTheConnectionAndAFloodOf1010UnauthenticatedSocketsStarvesNoCaller() throws Exception {
    // one keep-alive socket first: the 401 says close, and the server does close
    try (Socket s = keepAliveRequest(null)) {
      String head = RawHttp.readHead(s);
      assertTrue(head.startsWith("HTTP/1.1 401"), head);
      assertTrue(head.toLowerCase().contains("connection: close"), head);
      assertTrue(closedByServer(s, 5_000), "the server closes the connection after a 401");
    }
    List<Socket> flood = new ArrayList<>();
    try {
      for (int i = 0; i < FLOOD; i++) {
        flood.add(keepAliveRequest(i % 2 == 0 ? null : "tmk_wrongToken" + i));
      }
      // while the flood's answers are still due, a caller connects and is served; as http.md says, a
      // flood may cost it one retry (its connection let go as the oldest unauthenticated), never more
      try {
        stillServes();
      } catch (java.util.concurrent.CompletionException closed) {
        assertTrue(closed.getCause() instanceof io.vertx.core.http.HttpClosedException, closed.toString());
        stillServes();
      }
      long deadline = System.currentTimeMillis() + 30_000;
      int answered401 = 0;
      for (Socket s : flood) {
        String head = RawHttp.readHead(s);
        if (head.startsWith("HTTP/1.1 401")) {
          answered401++;
          assertTrue(head.toLowerCase().contains("connection: close"), head);
        } else {
          assertTrue(head.isEmpty(), "a socket either gets its 401 or is closed unanswered: " + head);
        }
        assertTrue(closedByServer(s, Math.max(1, deadline - System.currentTimeMillis())), "every flood socket is closed by the server");
      }
      assertTrue(answered401 > 0, "some of the flood was answered 401 before being let go");
    } finally {
      for (Socket s : flood) {
        s.close();
      }
    }
    stillServes();
  }

  @Test
  void silentSocketsHeldOpenNeverKeepACallerOut() throws Exception {
    List<Socket> silent = new ArrayList<>();
    try {
      for (int i = 0; i < FLOOD; i++) {
        silent.add(new Socket("127.0.0.1", node.port()));
      }
      // every silent socket still open takes a place only among the unauthenticated
      stillServes();
      stillServes();
    } finally {
      for (Socket s : silent) {
        s.close();
      }
    }
    stillServes();
  }

  /** A socket that sent one keep-alive POST, with the given token or none. */
  private Socket keepAliveRequest(String token) throws IOException {
    Socket s = new Socket("127.0.0.1", node.port());
    s.setSoTimeout(10_000);
    String request = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + (token == null ? "" : "Authorization: Bearer " + token + "\r\n")
        + "Content-Length: " + PING.length() + "\r\n\r\n" + PING;
    s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** True when the server closes the socket (end of stream or reset) within {@code millis}; the rest of the answer is dropped. */
  private static boolean closedByServer(Socket s, long millis) throws IOException {
    long deadline = System.currentTimeMillis() + millis;
    InputStream in = s.getInputStream();
    byte[] buffer = new byte[4096];
    while (System.currentTimeMillis() < deadline) {
      s.setSoTimeout((int) Math.max(1, deadline - System.currentTimeMillis()));
      try {
        if (in.read(buffer) < 0) {
          return true;
        }
      } catch (SocketTimeoutException e) {
        return false;
      } catch (SocketException e) {
        return true;
      }
    }
    return false;
  }

  // ---- per-caller concurrency ----

  private CompletableFuture<JsonObject> callAsync(String sessionId, String sql) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        // each call its own id: a session's in-flight calls are told apart by it
        JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "call-" + ids.incrementAndGet()).put("method", "tools/call")
            .put("params", new JsonObject().put("name", "query").put("arguments", new JsonObject().put("sql", sql)));
        RawHttp.Response r = post(List.of(bearer(NodeHarness.READ_WRITE_TOKEN), new String[] {"Mcp-Session-Id", sessionId},
            new String[] {"MCP-Protocol-Version", "2025-11-25"}), call.encode());
        assertEquals(200, r.status(), r.bodyText());
        return new JsonObject(r.bodyText()).getJsonObject("result");
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, pool);
  }

  /** The caller statements of the cap test that PostgreSQL is running now. */
  private long runningSleeps() {
    try (java.sql.Connection conn = ServiceHarness.jdbc(infra); java.sql.ResultSet rs = conn.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(2), %'")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static JsonObject error(JsonObject result) {
    assertEquals(true, result.getValue("isError"), result.encode());
    return result.getJsonObject("structuredContent").getJsonObject("error");
  }

  @Test
  void sixteenParallelCallsInOneSessionAllRun() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      List<CompletableFuture<JsonObject>> calls = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        calls.add(callAsync(c.sessionId(), "SELECT pg_sleep(0.2), " + i + " AS n"));
      }
      for (CompletableFuture<JsonObject> call : calls) {
        JsonObject result = call.get(60, TimeUnit.SECONDS);
        assertNull(result.getValue("isError"), result.encode());
      }
    }
  }

  @Test
  void callsPastTheCallerCapWaitThenEndRetriablyUnavailableAndOtherCallersAreServed() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN);
         McpHttpClient other = new McpHttpClient(url, NodeHarness.READ_ONLY_TOKEN)) {
      c.initialize();
      other.initialize();
      List<CompletableFuture<JsonObject>> running = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        running.add(callAsync(c.sessionId(), "SELECT pg_sleep(2), " + i + " AS n"));
      }
      // the 16 took every slot of this caller once all of them run in PostgreSQL (the pools hold 16)
      assertTrue(Await.until(() -> runningSleeps() == 16, java.time.Duration.ofSeconds(20)), "the 16 calls run");
      // three more: two find room in the queue of 2 and wait, one finds it full and is refused at once;
      // which one is which depends on the order the gateway reads them in, so none is assumed
      List<CompletableFuture<JsonObject>> more = new ArrayList<>();
      for (String tag : List.of("q1", "q2", "full")) {
        long started = System.nanoTime();
        more.add(callAsync(c.sessionId(), "SELECT '" + tag + "'")
            .thenApply(result -> result.copy().put("elapsed_ms", (System.nanoTime() - started) / 1_000_000)));
      }
      List<JsonObject> waitedOut = new ArrayList<>();
      List<JsonObject> refusedAtOnce = new ArrayList<>();
      for (CompletableFuture<JsonObject> call : more) {
        JsonObject result = call.get(30, TimeUnit.SECONDS);
        JsonObject e = error(result).put("elapsed_ms", result.getLong("elapsed_ms"));
        (e.getString("message").contains("waited 500 ms") ? waitedOut : refusedAtOnce).add(e);
      }
      assertEquals(1, refusedAtOnce.size(), () -> "one call finds the queue full: " + refusedAtOnce + " " + waitedOut);
      JsonObject full = refusedAtOnce.get(0);
      assertEquals("UNAVAILABLE", full.getString("code"));
      assertEquals(true, full.getValue("retriable"));
      assertTrue(full.getString("message").contains("Retry shortly"), full.getString("message"));
      assertEquals(16, full.getInteger("max_concurrent_calls"));
      assertTrue(full.getLong("elapsed_ms") < 400, "a full queue refuses at once, took " + full.getLong("elapsed_ms") + " ms");
      assertEquals(2, waitedOut.size());
      for (JsonObject waited : waitedOut) {
        assertEquals("UNAVAILABLE", waited.getString("code"));
        assertEquals(true, waited.getValue("retriable"));
        assertTrue(waited.getString("message").contains("waited 500 ms"), waited.getString("message"));
      }
      // another caller is not held back by this one's cap
      JsonObject otherResult = other.callTool("status", new JsonObject());
      assertNull(otherResult.getValue("isError"), otherResult.encode());

      for (CompletableFuture<JsonObject> call : running) {
        JsonObject result = call.get(60, TimeUnit.SECONDS);
        assertNull(result.getValue("isError"), "the calls within the cap all ran: " + result.encode());
      }
      JsonObject after = c.callTool("query", new JsonObject().put("sql", "SELECT 2 AS two"));
      assertNull(after.getValue("isError"), "every slot was given back: " + after.encode());
    }
  }

  // ---- NUL ----

  @Test
  void aNulInSqlOrAParameterIsInvalidArgumentsNamingThePointerAndNeverTheValue() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject inSql = error(c.callTool("query", new JsonObject().put("sql", "SELECT 's3cr3t\u0000tail'")));
      assertEquals("INVALID_ARGUMENTS", inSql.getString("code"));
      assertEquals(false, inSql.getValue("retriable"));
      JsonArray faults = inSql.getJsonArray("faults");
      assertEquals("/sql", faults.getJsonObject(0).getString("pointer"));
      assertTrue(faults.getJsonObject(0).getString("expected").contains("NUL"), faults.encode());
      assertFalse(inSql.encode().contains("s3cr3t"), inSql.encode());

      JsonObject inParam = error(c.callTool("query", new JsonObject().put("sql", "SELECT $1::text AS v")
          .put("params", new JsonArray().add("s3cr3t\u0000"))));
      assertEquals("INVALID_ARGUMENTS", inParam.getString("code"));
      assertEquals("/params/0", inParam.getJsonArray("faults").getJsonObject(0).getString("pointer"));
      assertFalse(inParam.encode().contains("s3cr3t"), inParam.encode());

      JsonObject inExecute = error(c.callTool("execute", new JsonObject().put("sql", "UPDATE customers SET name = 'x\u0000' WHERE false")));
      assertEquals("INVALID_ARGUMENTS", inExecute.getString("code"));
    }
    stillServes();
  }
}
