package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two gateways in one cluster over 127.0.0.1: a session lives in cluster storage, a GET stream
 * resumes on the other gateway after its own died, a stateless client may alternate, and a change
 * made anywhere reaches the subscriber wherever it is connected.
 */
@ExtendWith(InfraExtension.class)
class GatewayClusterIT {

  /**
   * How long a gateway trusts its own copy of a session it served: the gateway's
   * {@code SessionStore.LOCAL_MILLIS}, written again here because tests reach no module's {@code impl}.
   */
  private static final long SESSION_COPY_MILLIS = 2_000;

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(a);
    TestNodes.stop(b);
  }

  private void startBoth(SharedInfra infra) {
    TidemarkNode[] pair = TestNodes.startGatewayPair(infra);
    a = pair[0];
    b = pair[1];
  }

  static MultiMap streamHeaders(McpHttpClient c, String lastEventId) {
    return dev.tidemark.testsupport.NodeHarness.streamHeaders(c, lastEventId);
  }

  /**
   * Runs {@code statement}, a change to products, and returns once its notification was sent, as
   * a second subscriber on {@code node} hears it. A resource's notifications are at least 20 ms
   * apart, and changes within that share one (resources.md): a change made after this has a
   * notification of its own.
   */
  static void changeAndAwaitItsNotification(SharedInfra infra, TidemarkNode node, String statement) throws Exception {
    try (McpHttpClient watcher = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      watcher.initialize();
      assertEquals(new JsonObject(), watcher.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/products"))
          .getJsonObject("result"));
      try (SseStream heard = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(node), streamHeaders(watcher, null), null)) {
        assertEquals(200, heard.status());
        sql(infra, statement);
        assertNotNull(heard.await("notifications/resources/updated", 15_000), "a second subscriber hears the change");
      }
    }
  }

  static void sql(SharedInfra infra, String statement) throws Exception {
    try (Connection conn = TestNodes.jdbc(infra)) {
      conn.createStatement().execute(statement);
    }
  }

  @Test
  void aSessionStartedOnOneGatewayWorksOnTheOtherAndItsStreamResumesThereAfterTheFirstDies(SharedInfra infra) throws Exception {
    startBoth(infra);
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      client.at(TestNodes.mcpUrl(b));
      assertEquals("gateway-b", client.callTool("status", new JsonObject()).getJsonObject("structuredContent").getString("node"),
          "initialized on A, called on B");
      assertEquals(new JsonObject(), client.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/products")).getJsonObject("result"));

      String lastSeen;
      try (SseStream onA = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(a), streamHeaders(client, null), null)) {
        assertEquals(200, onA.status());
        sql(infra, "UPDATE products SET description = 'seen on A' WHERE id = 1");
        JsonObject first = onA.await("notifications/resources/updated", 15_000);
        assertNotNull(first, "the subscriber on A hears a change made with plain SQL");
        assertEquals("tidemark://table/products", first.getJsonObject("params").getString("uri"));
        lastSeen = first.getString("_event_id");
        TestNodes.stop(a);
        a = null;
      }
      // while no stream is open anywhere, two more changes commit
      changeAndAwaitItsNotification(infra, b, "UPDATE products SET description = 'missed 1' WHERE id = 2");
      sql(infra, "UPDATE products SET description = 'missed 2' WHERE id = 3");
      try (SseStream onB = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(b), streamHeaders(client, lastSeen), null)) {
        assertEquals(200, onB.status());
        JsonObject missed1 = onB.await("notifications/resources/updated", 15_000);
        JsonObject missed2 = onB.await("notifications/resources/updated", 15_000);
        assertNotNull(missed1, "the first missed event is replayed on B");
        assertNotNull(missed2, "the second missed event is replayed on B");
        assertEquals("g", SseStream.streamOf(missed1.getString("_event_id")), "the GET stream's own events");
        assertTrue(SseStream.seqOf(missed1.getString("_event_id")) > SseStream.seqOf(lastSeen));
        assertTrue(SseStream.seqOf(missed2.getString("_event_id")) > SseStream.seqOf(missed1.getString("_event_id")));
        assertNull(onB.await("notifications/resources/updated", 1_000), "each change is announced once, though both gateways hear it");
      }
    }
  }

  @Test
  void aSessionEndedOnOneGatewayEndsOnTheOtherThoughItKeptACopy(SharedInfra infra) {
    startBoth(infra);
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      client.at(TestNodes.mcpUrl(b));
      assertEquals(200, client.post(client.request("ping", null)).status(), "B served the session, so B keeps a copy of it");
      client.at(TestNodes.mcpUrl(a));
      assertEquals(200, client.delete().status(), "the session ended on A");
      client.at(TestNodes.mcpUrl(b));
      // B hears of the end over the event bus; its copy would expire only SESSION_COPY_MILLIS after B read
      // it, so a 404 well within that comes from the message
      assertTrue(Await.until(() -> client.post(client.request("ping", null)).status() == 404,
          Duration.ofMillis(SESSION_COPY_MILLIS / 2)), "B refuses the ended session");
    }
  }

  @Test
  void aChangeMadeThroughTidemarkOnBReachesTheSubscriberOnA(SharedInfra infra) throws Exception {
    startBoth(infra);
    try (McpHttpClient subscriber = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN);
         McpHttpClient writer = new McpHttpClient(TestNodes.mcpUrl(b), TestNodes.READ_WRITE_TOKEN)) {
      subscriber.initialize();
      subscriber.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://row/customers/3"));
      try (SseStream onA = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(a), streamHeaders(subscriber, null), null)) {
        writer.initialize();
        JsonObject change = new JsonObject().put("table", "customers").put("key", 3)
            .put("set", new JsonObject().put("notes", "changed through node B"));
        String planId = writer.callTool("update_rows", change).getJsonObject("structuredContent").getString("plan_id");
        JsonObject committed = writer.callTool("update_rows", change.copy().put("plan_id", planId).put("idempotency_key", "cluster-it-3"));
        assertNull(committed.getValue("isError"), committed.encode());
        JsonObject heard = onA.await("notifications/resources/updated", 15_000);
        assertNotNull(heard, "the subscriber on A hears a change committed through B");
        assertEquals("tidemark://row/customers/3", heard.getJsonObject("params").getString("uri"));
      }
    }
  }

  @Test
  void theAnswerToAnElicitationMayArriveOnTheOtherGateway(SharedInfra infra) throws Exception {
    startBoth(infra);
    sql(infra, "CREATE TABLE IF NOT EXISTS cluster_consent (id int PRIMARY KEY)");
    sql(infra, "GRANT SELECT, INSERT, UPDATE, DELETE ON cluster_consent TO tidemark_writer");
    sql(infra, "INSERT INTO cluster_consent VALUES (1) ON CONFLICT DO NOTHING");
    try (McpHttpClient onB = new McpHttpClient(TestNodes.mcpUrl(b), TestNodes.READ_WRITE_TOKEN)) {
      onB.initialize(new JsonObject().put("elicitation", new JsonObject()));
      JsonObject removal = new JsonObject().put("table", "cluster_consent").put("key", 1);
      String planId = onB.callTool("delete_rows", removal).getJsonObject("structuredContent").getString("plan_id");
      JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "remove-1").put("method", "tools/call").put("params",
          new JsonObject().put("name", "delete_rows").put("arguments", removal.copy().put("plan_id", planId).put("idempotency_key", "cluster-consent-1")));
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN)
          .add("Content-Type", "application/json").add("Accept", "application/json, text/event-stream")
          .add("Mcp-Session-Id", onB.sessionId()).add("MCP-Protocol-Version", "2025-11-25");
      try (SseStream stream = SseStream.open(HttpMethod.POST, TestNodes.mcpUrl(b), headers, call.toBuffer())) {
        JsonObject ask = stream.await("elicitation/create", 15_000);
        assertNotNull(ask, "the call on B asks the user");
        onB.at(TestNodes.mcpUrl(a));
        assertEquals(202, onB.post(new JsonObject().put("jsonrpc", "2.0").put("id", ask.getValue("id")).put("result",
            new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true)))).status(), "the answer goes to A");
        JsonObject response = stream.await("response", 15_000);
        assertNotNull(response, "the answer reached the call waiting on B");
        assertNull(response.getJsonObject("result").getValue("isError"), response.encode());
      }
    }
  }

  @Test
  void aStatelessClientMayAlternateGatewaysOnEveryRequest(SharedInfra infra) {
    startBoth(infra);
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      for (int i = 0; i < 6; i++) {
        client.at(TestNodes.mcpUrl(i % 2 == 0 ? a : b));
        String method = i % 3 == 0 ? "server/discover" : i % 3 == 1 ? "tools/list" : "tools/call";
        JsonObject params = new JsonObject().put("_meta", new JsonObject()
            .put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
            .put("io.modelcontextprotocol/clientCapabilities", new JsonObject()));
        MultiMap headers = MultiMap.caseInsensitiveMultiMap()
            .add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN)
            .add("Content-Type", "application/json").add("Accept", "application/json, text/event-stream")
            .add("MCP-Protocol-Version", "2026-07-28").add("Mcp-Method", method);
        if (method.equals("tools/call")) {
          params.put("name", "list_tables");
          headers.add("Mcp-Name", "list_tables");
        }
        McpHttpClient.Reply reply = client.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", i).put("method", method)
            .put("params", params).toBuffer(), headers);
        assertEquals(200, reply.status(), method + " on " + (i % 2 == 0 ? "A" : "B") + ": " + reply.body());
        assertEquals("complete", reply.json().getJsonObject("result").getString("resultType"));
      }
    }
  }

  @Test
  void aRowSubscriberOnOneGatewayHearsAChangeThatAListenerOnTheOtherAlsoHears(SharedInfra infra) throws Exception {
    startBoth(infra);
    try (McpHttpClient legacy = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      legacy.initialize();
      legacy.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://row/order_items/5,1"));
      JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", 42).put("method", "subscriptions/listen")
          .put("params", new JsonObject().put("_meta", new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
                  .put("io.modelcontextprotocol/clientCapabilities", new JsonObject()))
              .put("notifications", new JsonObject().put("resourceSubscriptions",
                  new io.vertx.core.json.JsonArray().add("tidemark://table/order_items"))));
      MultiMap listenHeaders = MultiMap.caseInsensitiveMultiMap()
          .add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN).add("Content-Type", "application/json")
          .add("Accept", "text/event-stream").add("MCP-Protocol-Version", "2026-07-28").add("Mcp-Method", "subscriptions/listen");
      try (SseStream onA = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(a), streamHeaders(legacy, null), null);
           SseStream onB = SseStream.open(HttpMethod.POST, TestNodes.mcpUrl(b), listenHeaders, listen.toBuffer())) {
        assertEquals("notifications/subscriptions/acknowledged", onB.next(10_000).data().getString("method"));
        sql(infra, "UPDATE order_items SET quantity = quantity + 1 WHERE order_id = 5 AND line_no = 1");
        JsonObject row = onA.await("notifications/resources/updated", 15_000);
        assertNotNull(row, "the row subscriber on A hears it");
        assertEquals("tidemark://row/order_items/5,1", row.getJsonObject("params").getString("uri"), "the URI as the client wrote it");
        JsonObject table = onB.await("notifications/resources/updated", 15_000);
        assertNotNull(table, "the listener on B hears it");
        assertEquals(42, table.getJsonObject("params").getJsonObject("_meta").getInteger("io.modelcontextprotocol/subscriptionId"));
        sql(infra, "CREATE TABLE IF NOT EXISTS cluster_it_new_table (id int PRIMARY KEY)");
        assertNotNull(onA.await("notifications/resources/list_changed", 15_000), "DDL sends list_changed");
      }
    }
  }
}
