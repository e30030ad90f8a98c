package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient.Reply;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Streamable HTTP transport of both eras on one node: streams, cancellation, utilities, headers, deadlines. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TransportIT {

  private SharedInfra infra;
  private NodeHarness node;
  private String url;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command,changelog", Map.of(
        ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "60000",
        ConfigKey.HTTP_BODY_TIMEOUT_MS, "1000",
        ConfigKey.HTTP_MAX_CONNECTIONS, "40",
        // a role without grants, whose subscriptions are refused
        ConfigKey.DATABASE_CALLER_PASSWORDS, GatewayFront.callerPasswordsWithNobody()));
    url = node.mcpUrl();
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(node);
  }

  private MultiMap legacyHeaders(McpHttpClient c) {
    return MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("Mcp-Session-Id", c.sessionId())
        .add("MCP-Protocol-Version", "2025-11-25");
  }

  private static JsonObject modernMeta(JsonObject params) {
    return params.put("_meta", params.getJsonObject("_meta", new JsonObject())
        .put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
        .put("io.modelcontextprotocol/clientCapabilities", new JsonObject())
        .put("io.modelcontextprotocol/clientInfo", new JsonObject().put("name", "transport-it").put("version", "1")));
  }

  private static MultiMap modernHeaders(String method, String name) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("MCP-Protocol-Version", "2026-07-28")
        .add("Mcp-Method", method);
    if (name != null) {
      h.add("Mcp-Name", name);
    }
    return h;
  }

  private Reply modern(McpHttpClient c, String method, String name, JsonObject params, MultiMap override) {
    MultiMap headers = modernHeaders(method, name);
    if (override != null) {
      override.names().forEach(n -> headers.set(n, override.get(n)));
    }
    return c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", method).put("params", modernMeta(params)).toBuffer(), headers);
  }

  private long activeSleeps() {
    try (Connection conn = ServiceHarness.jdbc(infra);
         ResultSet rs = conn.createStatement().executeQuery(
             "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query ILIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()")) {
      rs.next();
      return rs.getLong(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Polls the database until no backend runs the sleep; the elapsed milliseconds, or -1 after 5 s. */
  private long millisUntilNoSleep(long started) {
    // checked back to back, not every 100 ms: the figure is the latency itself
    while (System.nanoTime() - started < 5_000_000_000L) {
      if (activeSleeps() == 0) {
        return (System.nanoTime() - started) / 1_000_000;
      }
    }
    return -1;
  }

  @Test
  void aToolCallThatMayHearProgressStreamsAPrimingEventThenItsResponseWithIncreasingIds() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      Reply reply = c.post(c.request("tools/call", new JsonObject().put("name", "status").put("arguments", new JsonObject())
          .put("_meta", new JsonObject().put("progressToken", "tok-prime"))));
      assertTrue(reply.isStream(), reply.headers().get("Content-Type"));
      assertEquals("no", reply.headers().get("X-Accel-Buffering"));
      List<McpHttpClient.SseEvent> events = reply.events();
      assertNull(events.get(0).data(), "the first event primes: an id and no data");
      assertNotNull(events.get(0).id());
      String stream = SseStream.streamOf(events.get(0).id());
      assertTrue(stream.matches("p[0-9a-f]{16}"), events.get(0).id());
      long previous = -1;
      for (McpHttpClient.SseEvent e : events) {
        assertEquals(stream, SseStream.streamOf(e.id()), "every event names the call's own stream");
        long seq = SseStream.seqOf(e.id());
        assertTrue(seq > previous, "event ids increase");
        previous = seq;
      }
      assertEquals("status", reply.json().getJsonObject("result").getJsonObject("structuredContent").getString("database").equals("main") ? "status" : "?");
      Reply json = c.post(c.request("tools/call", new JsonObject().put("name", "status")).toBuffer(),
          MultiMap.caseInsensitiveMultiMap().add("Accept", "application/json"));
      assertFalse(json.isStream(), "a client that accepts only JSON gets JSON");
    }
  }

  @Test
  void aToolCallThatNothingCanPrecedeIsAnsweredAsJsonUntilTheSessionSetsALogLevel() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject call = c.request("tools/call", new JsonObject().put("name", "status"));
      Reply quiet = c.post(call);
      assertFalse(quiet.isStream(), "no progress token, no log level, no server requests: one JSON body");
      assertTrue(quiet.headers().get("Content-Type").startsWith("application/json"), quiet.headers().get("Content-Type"));
      assertEquals("main", quiet.json().getJsonObject("result").getJsonObject("structuredContent").getString("database"));
      c.rpc("logging/setLevel", new JsonObject().put("level", "error"));
      assertFalse(c.post(c.request("tools/call", new JsonObject().put("name", "status"))).isStream(),
          "a Tidemark tool logs nothing above warning");
      c.rpc("logging/setLevel", new JsonObject().put("level", "warning"));
      assertTrue(c.post(c.request("tools/call", new JsonObject().put("name", "status"))).isStream(), "log messages may now come first");
    }
    try (McpHttpClient asking = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      asking.initialize(new JsonObject().put("elicitation", new JsonObject()).put("sampling", new JsonObject()).put("roots", new JsonObject()));
      assertFalse(asking.post(asking.request("tools/call", new JsonObject().put("name", "status"))).isStream(),
          "a read never asks the client anything, so it answers with JSON though the client could be asked");
      Reply change = asking.post(asking.request("tools/call", new JsonObject().put("name", "delete_rows")
          .put("arguments", new JsonObject().put("table", "products").put("key", 1))));
      assertTrue(change.isStream(), "a change may ask for consent, so it gets a stream the question can travel on");
    }
  }

  @Test
  void notificationsCancelledStopsTheRunningStatementWithinASecond() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      // the progress token makes the answer a stream, whose headers come before the statement ends
      JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "sleepy-1").put("method", "tools/call")
          .put("params", new JsonObject().put("name", "query").put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(30)"))
              .put("_meta", new JsonObject().put("progressToken", "sleepy-progress")));
      try (SseStream stream = SseStream.open(HttpMethod.POST, url, legacyHeaders(c), call.toBuffer())) {
        assertEquals(200, stream.status());
        Await.until(() -> activeSleeps() == 1, java.time.Duration.ofSeconds(10));
        assertEquals(1, activeSleeps(), "the statement runs");
        long started = System.nanoTime();
        Reply cancelled = c.post(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/cancelled")
            .put("params", new JsonObject().put("requestId", "sleepy-1").put("reason", "the user changed their mind")));
        assertEquals(202, cancelled.status());
        long millis = millisUntilNoSleep(started);
        assertTrue(millis >= 0 && millis < 1_000, "the backend is idle " + millis + " ms after the cancellation");
        assertNull(stream.await("response", 2_000), "a cancelled request gets no response");
      }
      assertEquals(new JsonObject(), c.rpc("ping", null).getJsonObject("result"), "the session keeps working");
    }
  }

  @Test
  void notificationsCancelledStopsTheStatementOfAChangeToo() throws Exception {
    // a node without the query role: the command role itself must hear the cancellation
    NodeHarness commandOnly = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,command",
        Map.of(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "60000"));
    String commandUrl = commandOnly.mcpUrl();
    try (McpHttpClient c = new McpHttpClient(commandUrl, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      // a change's plan runs its statement (and rolls it back), so the sleep runs on the command role's connection
      JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "sleepy-change").put("method", "tools/call")
          .put("params", new JsonObject().put("name", "execute").put("arguments", new JsonObject()
                  .put("sql", "UPDATE customers SET name = name WHERE id = (SELECT 1 FROM pg_sleep(30))"))
              .put("_meta", new JsonObject().put("progressToken", "sleepy-change-progress")));
      try (SseStream stream = SseStream.open(HttpMethod.POST, commandUrl, legacyHeaders(c), call.toBuffer())) {
        assertEquals(200, stream.status());
        Await.until(() -> activeSleeps() == 1, java.time.Duration.ofSeconds(10));
        long started = System.nanoTime();
        Reply cancelled = c.post(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/cancelled")
            .put("params", new JsonObject().put("requestId", "sleepy-change")));
        assertEquals(202, cancelled.status());
        long millis = millisUntilNoSleep(started);
        assertTrue(millis >= 0 && millis < 1_000, "the change's backend is idle " + millis + " ms after the cancellation");
        assertNull(stream.await("response", 2_000), "a cancelled request gets no response");
      }
    } finally {
      ServiceHarness.closeAll(commandOnly);
    }
  }

  @Test
  void closingAModernResponseStreamCancelsItsRequest() throws Exception {
    JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", 9).put("method", "tools/call")
        .put("params", modernMeta(new JsonObject().put("name", "query").put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(30)"))
            .put("_meta", new JsonObject().put("progressToken", "p-9"))));
    SseStream stream = SseStream.open(HttpMethod.POST, url, modernHeaders("tools/call", "query"), call.toBuffer());
    assertEquals(200, stream.status());
    Await.until(() -> activeSleeps() == 1, java.time.Duration.ofSeconds(10));
    assertEquals(1, activeSleeps());
    long started = System.nanoTime();
    stream.close();
    long millis = millisUntilNoSleep(started);
    assertTrue(millis >= 0 && millis < 1_000, "the backend is idle " + millis + " ms after the stream closed");
  }

  @Test
  void aCallWithAProgressTokenHearsIncreasingProgress() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject call = c.request("tools/call", new JsonObject().put("name", "query")
          .put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(2.5) AS slept"))
          .put("_meta", new JsonObject().put("progressToken", "tok-1")));
      Reply reply = c.post(call);
      List<Double> progress = new ArrayList<>();
      for (McpHttpClient.SseEvent e : reply.events()) {
        if (e.data() != null && "notifications/progress".equals(e.data().getString("method"))) {
          assertEquals("tok-1", e.data().getJsonObject("params").getString("progressToken"));
          progress.add(e.data().getJsonObject("params").getDouble("progress"));
        }
      }
      assertTrue(progress.size() >= 2, "progress every second: " + progress);
      for (int i = 1; i < progress.size(); i++) {
        assertTrue(progress.get(i) > progress.get(i - 1), "progress increases: " + progress);
      }
      assertNotNull(reply.json().getJsonObject("result"));
    }
  }

  @Test
  void logMessagesFollowTheLevelTheClientSet() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject call = c.request("tools/call", new JsonObject().put("name", "status"));
      assertTrue(c.post(call).events().stream().noneMatch(e -> e.data() != null && "notifications/message".equals(e.data().getString("method"))),
          "no messages before logging/setLevel");
      assertEquals(new JsonObject(), c.rpc("logging/setLevel", new JsonObject().put("level", "debug")).getJsonObject("result"));
      JsonObject message = c.post(c.request("tools/call", new JsonObject().put("name", "status"))).events().stream()
          .map(McpHttpClient.SseEvent::data)
          .filter(d -> d != null && "notifications/message".equals(d.getString("method"))).findFirst().orElseThrow();
      assertEquals("debug", message.getJsonObject("params").getString("level"));
      assertEquals(-32602, c.rpc("logging/setLevel", new JsonObject().put("level", "loud")).getJsonObject("error").getInteger("code"));
    }
  }

  @Test
  void completionOffersTableNamesTheCallerCanRead() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_ONLY_TOKEN)) {
      c.initialize();
      JsonObject result = c.rpc("completion/complete", new JsonObject()
          .put("ref", new JsonObject().put("type", "ref/resource").put("uri", "tidemark://table/{table}"))
          .put("argument", new JsonObject().put("name", "table").put("value", "ord"))).getJsonObject("result");
      JsonArray values = result.getJsonObject("completion").getJsonArray("values");
      assertTrue(values.contains("orders") && values.contains("order_items"), values.encode());
      assertFalse(values.contains("customers"));

      JsonObject columns = c.rpc("completion/complete", new JsonObject()
          .put("ref", new JsonObject().put("type", "ref/prompt").put("name", "explore-database"))
          .put("argument", new JsonObject().put("name", "column").put("value", "cust"))
          .put("context", new JsonObject().put("arguments", new JsonObject().put("table", "orders")))).getJsonObject("result");
      assertEquals(new JsonArray().add("customer_id"), columns.getJsonObject("completion").getJsonArray("values"));

      JsonObject keys = c.rpc("completion/complete", new JsonObject()
          .put("ref", new JsonObject().put("type", "ref/resource").put("uri", "tidemark://row/{table}/{key}"))
          .put("argument", new JsonObject().put("name", "key").put("value", "49"))
          .put("context", new JsonObject().put("arguments", new JsonObject().put("table", "customers")))).getJsonObject("result");
      JsonArray keyValues = keys.getJsonObject("completion").getJsonArray("values");
      assertTrue(keyValues.contains("49") && keyValues.contains("499") && keyValues.stream().allMatch(v -> ((String) v).startsWith("49")),
          keyValues.encode());
    }
  }

  @Test
  void theExploreDatabasePromptGuidesAReadOnlySurvey() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_ONLY_TOKEN)) {
      c.initialize();
      JsonArray prompts = c.rpc("prompts/list", null).getJsonObject("result").getJsonArray("prompts");
      assertTrue(prompts.stream().anyMatch(p -> "explore-database".equals(((JsonObject) p).getString("name"))));
      String text = c.rpc("prompts/get", new JsonObject().put("name", "explore-database").put("arguments", new JsonObject().put("table", "orders")))
          .getJsonObject("result").getJsonArray("messages").getJsonObject(0).getJsonObject("content").getString("text");
      assertTrue(text.contains("change nothing") && text.contains("describe_table") && text.contains("orders"), text);
      assertEquals(-32602, c.rpc("prompts/get", new JsonObject().put("name", "no-such-prompt")).getJsonObject("error").getInteger("code"));
      String safe = c.rpc("prompts/get", new JsonObject().put("name", "safe-change").put("arguments", new JsonObject().put("change", "close ticket 7")))
          .getJsonObject("result").getJsonArray("messages").getJsonObject(0).getJsonObject("content").getString("text");
      assertTrue(safe.contains("close ticket 7") && safe.contains("plan_id") && safe.contains("idempotency_key") && safe.contains("confirm"), safe);
      assertEquals(-32602, c.rpc("prompts/get", new JsonObject().put("name", "safe-change")).getJsonObject("error").getInteger("code"),
          "the change argument is required");
      JsonObject tables = c.rpc("completion/complete", new JsonObject()
          .put("ref", new JsonObject().put("type", "ref/prompt").put("name", "explore-database"))
          .put("argument", new JsonObject().put("name", "table").put("value", "cust"))).getJsonObject("result");
      assertEquals(new JsonArray().add("customers"), tables.getJsonObject("completion").getJsonArray("values"));
    }
  }

  @Test
  void resourcesAreReadableOnBothErasAndAMissingOneIsNotFound() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_ONLY_TOKEN)) {
      c.initialize();
      JsonObject row = c.rpc("resources/read", new JsonObject().put("uri", "tidemark://row/order_items/1,1")).getJsonObject("result");
      JsonObject content = new JsonObject(row.getJsonArray("contents").getJsonObject(0).getString("text"));
      assertEquals(1, content.getJsonObject("row").getInteger("line_no"));
      JsonObject missing = c.rpc("resources/read", new JsonObject().put("uri", "tidemark://table/no_such_table"));
      assertEquals(-32002, missing.getJsonObject("error").getInteger("code"));
      assertEquals(-32002, c.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/no_such_table"))
          .getJsonObject("error").getInteger("code"), "a subscription to a resource that does not exist is refused");
      JsonArray templates = c.rpc("resources/templates/list", null).getJsonObject("result").getJsonArray("resourceTemplates");
      assertTrue(templates.encode().contains("tidemark://row/{table}/{key}"));
      String docs = c.rpc("resources/read", new JsonObject().put("uri", "tidemark://docs/errors")).getJsonObject("result")
          .getJsonArray("contents").getJsonObject(0).getString("text");
      assertTrue(docs.contains("INVALID_ARGUMENTS"));
      Reply modernMissing = modern(c, "resources/read", "tidemark://table/no_such_table", new JsonObject().put("uri", "tidemark://table/no_such_table"), null);
      assertEquals(-32602, modernMissing.json().getJsonObject("error").getInteger("code"), "2026-07-28 uses -32602 for a missing resource");
    }
  }

  @Test
  void aSubscriptionToATableTheCallerCannotReadIsRefused() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, GatewayFront.nobody(infra))) {
      c.initialize();
      JsonObject refused = c.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/customers"));
      assertEquals(-32002, refused.getJsonObject("error").getInteger("code"), refused.encode());
      JsonObject read = c.rpc("resources/read", new JsonObject().put("uri", "tidemark://row/customers/1"));
      assertEquals(-32002, read.getJsonObject("error").getInteger("code"), "its rows are not readable either");
    }
  }

  @Test
  void theModernEraIsStatelessAndChecksItsHeaders() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      Reply discover = modern(c, "server/discover", null, new JsonObject(), null);
      assertEquals(200, discover.status());
      JsonObject result = discover.json().getJsonObject("result");
      assertTrue(result.getJsonArray("supportedVersions").contains("2026-07-28"));
      assertEquals("complete", result.getString("resultType"));
      assertEquals("public", result.getString("cacheScope"));
      assertTrue(result.getLong("ttlMs") >= 0);
      assertEquals("tidemark", result.getJsonObject("_meta").getJsonObject("io.modelcontextprotocol/serverInfo").getString("name"));
      assertNull(discover.headers().get("Mcp-Session-Id"), "no session on this era");

      JsonObject tools = modern(c, "tools/list", null, new JsonObject(), null).json().getJsonObject("result");
      assertEquals("private", tools.getString("cacheScope"));
      assertTrue(tools.getJsonArray("tools").size() >= 8);

      Reply call = modern(c, "tools/call", "status", new JsonObject().put("name", "status"), null);
      assertEquals("complete", call.json().getJsonObject("result").getString("resultType"));
      String encoded = "=?base64?" + Base64.getEncoder().encodeToString("status".getBytes(StandardCharsets.UTF_8)) + "?=";
      assertEquals(200, modern(c, "tools/call", encoded, new JsonObject().put("name", "status"), null).status(), "a base64 Mcp-Name is decoded");

      Reply wrongName = modern(c, "tools/call", "list_tables", new JsonObject().put("name", "status"), null);
      assertEquals(400, wrongName.status());
      assertEquals(-32020, wrongName.json().getJsonObject("error").getInteger("code"));
      Reply wrongMethod = modern(c, "tools/list", null, new JsonObject(), MultiMap.caseInsensitiveMultiMap().add("Mcp-Method", "tools/call"));
      assertEquals(-32020, wrongMethod.json().getJsonObject("error").getInteger("code"));
      Reply versionMismatch = modern(c, "tools/list", null, new JsonObject(), MultiMap.caseInsensitiveMultiMap().add("MCP-Protocol-Version", "2025-11-25"));
      assertEquals(-32020, versionMismatch.json().getJsonObject("error").getInteger("code"));

      JsonObject future = new JsonObject().put("jsonrpc", "2.0").put("id", 3).put("method", "tools/list").put("params",
          new JsonObject().put("_meta", new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2030-01-01")));
      Reply unsupported = c.send("POST", future.toBuffer(), modernHeaders("tools/list", null).set("MCP-Protocol-Version", "2030-01-01"));
      assertEquals(400, unsupported.status());
      JsonObject error = unsupported.json().getJsonObject("error");
      assertEquals(-32022, error.getInteger("code"));
      assertTrue(error.getJsonObject("data").getJsonArray("supported").contains("2026-07-28"));
      assertEquals("2030-01-01", error.getJsonObject("data").getString("requested"));

      Reply unknown = modern(c, "tables/drop", null, new JsonObject(), null);
      assertEquals(404, unknown.status());
      assertEquals(-32601, unknown.json().getJsonObject("error").getInteger("code"));
      assertEquals(404, modern(c, "ping", null, new JsonObject(), null).status(), "ping belongs to the older era");
    }
  }

  @Test
  void onTheModernEraLogMessagesComeOnlyForARequestThatAskedForThem() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      Reply quiet = modern(c, "tools/call", "status", new JsonObject().put("name", "status"), null);
      assertFalse(quiet.isStream(), "without a log level or progress token the answer is plain JSON");
      Reply chatty = modern(c, "tools/call", "status", new JsonObject().put("name", "status")
          .put("_meta", new JsonObject().put("io.modelcontextprotocol/logLevel", "debug")), null);
      assertTrue(chatty.isStream());
      assertTrue(chatty.events().stream().anyMatch(e -> e.data() != null && "notifications/message".equals(e.data().getString("method"))
          && "debug".equals(e.data().getJsonObject("params").getString("level"))), chatty.body());
      Reply bad = modern(c, "tools/call", "status", new JsonObject().put("name", "status")
          .put("_meta", new JsonObject().put("io.modelcontextprotocol/logLevel", "verbose")), null);
      assertEquals(-32602, bad.json().getJsonObject("error").getInteger("code"));
    }
  }

  @Test
  void aListenStreamIsAcknowledgedFirstAndCarriesItsSubscriptionId() throws Exception {
    JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", "sub-7").put("method", "subscriptions/listen")
        .put("params", modernMeta(new JsonObject().put("notifications", new JsonObject()
            .put("resourcesListChanged", true)
            .put("resourceSubscriptions", new JsonArray().add("tidemark://table/customers").add("tidemark://table/nope")))));
    try (SseStream stream = SseStream.open(HttpMethod.POST, url, modernHeaders("subscriptions/listen", null), listen.toBuffer())) {
      assertEquals(200, stream.status());
      McpHttpClient.SseEvent first = stream.next(10_000);
      assertEquals("notifications/subscriptions/acknowledged", first.data().getString("method"));
      JsonObject params = first.data().getJsonObject("params");
      assertEquals("sub-7", params.getJsonObject("_meta").getString("io.modelcontextprotocol/subscriptionId"));
      assertEquals(new JsonArray().add("tidemark://table/customers"), params.getJsonObject("notifications").getJsonArray("resourceSubscriptions"),
          "only what the server honours is acknowledged");
      try (Connection conn = ServiceHarness.jdbc(infra)) {
        conn.createStatement().execute("UPDATE customers SET notes = 'listen test' WHERE id = 2");
      }
      JsonObject updated = stream.await("notifications/resources/updated", 15_000);
      assertNotNull(updated, "a change made with plain SQL reaches the listen stream");
      assertEquals("tidemark://table/customers", updated.getJsonObject("params").getString("uri"));
      assertEquals("sub-7", updated.getJsonObject("params").getJsonObject("_meta").getString("io.modelcontextprotocol/subscriptionId"));
    }
  }

  @Test
  void aBurstOfChangesIsFollowedByANotificationAndNotifiedAtMostOncePerIntervalPerResource() throws Exception {
    try (Connection conn = ServiceHarness.jdbc(infra)) {
      conn.createStatement().execute("DROP TABLE IF EXISTS public.it_burst");
      conn.createStatement().execute("CREATE TABLE public.it_burst (id int PRIMARY KEY, v int)");
      conn.createStatement().execute("INSERT INTO public.it_burst VALUES (1, 0)");
      conn.createStatement().execute("GRANT SELECT ON public.it_burst TO tidemark_writer");
    }
    JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", "burst").put("method", "subscriptions/listen")
        .put("params", modernMeta(new JsonObject().put("notifications", new JsonObject()
            .put("resourceSubscriptions", new JsonArray().add("tidemark://table/it_burst")))));
    try (SseStream stream = SseStream.open(HttpMethod.POST, url, modernHeaders("subscriptions/listen", null), listen.toBuffer())) {
      assertEquals("notifications/subscriptions/acknowledged", stream.next(10_000).data().getString("method"));
      int changes = 60;
      long firstCommit;
      long lastCommit;
      try (Connection conn = ServiceHarness.jdbc(infra); var update = conn.prepareStatement("UPDATE public.it_burst SET v = ? WHERE id = 1")) {
        firstCommit = System.nanoTime();
        for (int i = 1; i <= changes; i++) {
          update.setInt(1, i);
          update.executeUpdate();
        }
        lastCommit = System.nanoTime();
      }
      List<Long> arrivals = new ArrayList<>();
      // the first may take the relay's and the fan-out's time; then the stream goes quiet
      long wait = 15_000;
      while (stream.await("notifications/resources/updated", wait) != null) {
        arrivals.add(System.nanoTime());
        wait = 2_000;
      }
      assertFalse(arrivals.isEmpty(), "the burst was notified");
      assertTrue(arrivals.get(arrivals.size() - 1) > lastCommit, "a notification arrives after the last change, so the client's next read sees it");
      long spanMs = (arrivals.get(arrivals.size() - 1) - firstCommit) / 1_000_000;
      assertTrue(arrivals.size() <= spanMs / 20 + 2,
          arrivals.size() + " notifications of " + changes + " changes in " + spanMs + " ms: at most one per 20 ms, plus the first");
    }
  }

  @Test
  void aSlowBodyGets408AndTheConnectionCapRefusesExtraConnections() throws Exception {
    try (Socket s = new Socket("127.0.0.1", node.port())) {
      OutputStream out = s.getOutputStream();
      out.write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer "
          + NodeHarness.READ_WRITE_TOKEN + "\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      s.setSoTimeout(10_000);
      String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      assertEquals("HTTP/1.1 408", status);
    }
    List<Socket> sockets = new ArrayList<>();
    try {
      // a connection counts once a request of it authenticated; those past the cap get 503 and are closed
      String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
      for (int i = 0; i < 45; i++) {
        Socket s = new Socket("127.0.0.1", node.port());
        s.setSoTimeout(5_000);
        s.getOutputStream().write(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer "
            + NodeHarness.READ_WRITE_TOKEN + "\r\nContent-Length: " + ping.length() + "\r\n\r\n" + ping).getBytes(StandardCharsets.US_ASCII));
        sockets.add(s);
      }
      int refused = 0;
      for (Socket s : sockets) {
        String status = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
        if (status.equals("HTTP/1.1 503")) {
          refused++;
        } else {
          assertEquals("HTTP/1.1 400", status, "within the cap the request goes on to the session check");
        }
      }
      assertTrue(refused >= 5, "authenticated connections over http.max-connections are refused with 503, saw " + refused);
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
    }
    // the gateway counts a connection out once it has seen it close, a moment after this side closed it
    Await.that("the gateway to take a connection again once the extra ones are closed",
        java.time.Duration.ofSeconds(10), () -> {
          try (McpHttpClient probe = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
            return probe.post(probe.request("ping", null)).status() != 503;
          }
        });
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      assertEquals(200, c.post(c.request("ping", null)).status(), "the node keeps serving once the extra connections are gone");
    }
  }

  @Test
  void getNeedsASessionAndAcceptsOnlyStreams() {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      Reply noSession = c.send("GET", null, MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
          .add("Accept", "text/event-stream"));
      assertEquals(405, noSession.status());
      c.initialize();
      Reply json = c.send("GET", null, MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
          .add("Mcp-Session-Id", c.sessionId()).add("Accept", "application/json"));
      assertEquals(406, json.status());
    }
  }
}
