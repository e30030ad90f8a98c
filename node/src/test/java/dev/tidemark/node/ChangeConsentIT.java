package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A plan that removes data commits only with the user's consent: an elicitation on the call's own
 * stream (2025-11-25) or an input_required result (2026-07-28). A refusal writes nothing.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChangeConsentIT {

  private SharedInfra infra;
  private TidemarkNode node;
  private String url;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    TestNodes.prepareDatabase(infra);
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", Map.of());
    url = TestNodes.mcpUrl(node);
  }

  @AfterAll
  void stop() {
    TestNodes.stop(node);
  }

  private boolean ticketExists(int id) throws Exception {
    try (Connection conn = DriverManager.getConnection(infra.postgres().jdbcUrl(TestNodes.DATABASE), infra.postgres().user(), infra.postgres().password());
         ResultSet rs = conn.createStatement().executeQuery("SELECT count(*) FROM support_tickets WHERE id = " + id)) {
      rs.next();
      return rs.getInt(1) == 1;
    }
  }

  private static JsonObject deletion(int id) {
    return new JsonObject().put("table", "support_tickets").put("key", id);
  }

  private String plan(McpHttpClient c, int id) {
    JsonObject plan = c.callTool("delete_rows", deletion(id)).getJsonObject("structuredContent");
    assertEquals(true, plan.getBoolean("confirmation_required"), plan.encode());
    return plan.getString("plan_id");
  }

  private MultiMap streamHeaders(McpHttpClient c) {
    return MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN)
        .add("Content-Type", "application/json").add("Accept", "application/json, text/event-stream")
        .add("Mcp-Session-Id", c.sessionId()).add("MCP-Protocol-Version", "2025-11-25");
  }

  private JsonObject commitAnswering(McpHttpClient c, int id, String planId, JsonObject answer) throws Exception {
    JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "commit-" + id).put("method", "tools/call").put("params",
        new JsonObject().put("name", "delete_rows").put("arguments", deletion(id).put("plan_id", planId).put("idempotency_key", "consent-" + id)));
    try (SseStream stream = SseStream.open(HttpMethod.POST, url, streamHeaders(c), call.toBuffer())) {
      JsonObject ask = stream.await("elicitation/create", 15_000);
      assertNotNull(ask, "the user is asked on the call's own stream");
      assertTrue(ask.getJsonObject("params").getString("message").startsWith("Allow delete_rows?"), ask.encode());
      assertEquals(202, c.post(new JsonObject().put("jsonrpc", "2.0").put("id", ask.getValue("id")).put("result", answer)).status());
      JsonObject response = stream.await("response", 15_000);
      assertNotNull(response);
      return response.getJsonObject("result");
    }
  }

  @Test
  void anElicitedYesCommitsTheRemovalAndANoWritesNothing() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, TestNodes.READ_WRITE_TOKEN)) {
      c.initialize(new JsonObject().put("elicitation", new JsonObject()));

      JsonObject yes = commitAnswering(c, 291, plan(c, 291), new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true)));
      assertEquals(null, yes.getValue("isError"), yes.encode());
      assertEquals("commit", yes.getJsonObject("structuredContent").getString("mode"));
      assertTrue(!ticketExists(291), "the user allowed it: the row is gone");

      JsonObject no = commitAnswering(c, 292, plan(c, 292), new JsonObject().put("action", "decline"));
      assertEquals(true, no.getBoolean("isError"));
      assertEquals("DECISION_REQUIRED", no.getJsonObject("structuredContent").getJsonObject("error").getString("code"));
      assertTrue(ticketExists(292), "declined: nothing was written");
    }
  }

  @Test
  void aClientThatCannotBeAskedGetsDecisionRequiredUnlessItConfirms() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      String planId = plan(c, 293);
      JsonObject refused = c.callTool("delete_rows", deletion(293).put("plan_id", planId).put("idempotency_key", "consent-293"));
      assertEquals("DECISION_REQUIRED", refused.getJsonObject("structuredContent").getJsonObject("error").getString("code"));
      assertTrue(ticketExists(293));
      JsonObject confirmed = c.callTool("delete_rows", deletion(293).put("plan_id", planId).put("idempotency_key", "consent-293").put("confirm", true));
      assertEquals(null, confirmed.getValue("isError"), confirmed.encode());
      assertTrue(!ticketExists(293));
    }
  }

  @Test
  void onTheModernEraConsentIsAnInputRequiredResultAndTheRetryCarriesTheAnswer() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      String planId = plan(c, 294);
      JsonObject arguments = deletion(294).put("plan_id", planId).put("idempotency_key", "consent-294");
      JsonObject meta = new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
          .put("io.modelcontextprotocol/clientCapabilities", new JsonObject().put("elicitation", new JsonObject()));
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN)
          .add("Content-Type", "application/json").add("Accept", "application/json").add("MCP-Protocol-Version", "2026-07-28")
          .add("Mcp-Method", "tools/call").add("Mcp-Name", "delete_rows");
      JsonObject params = new JsonObject().put("name", "delete_rows").put("arguments", arguments).put("_meta", meta);
      JsonObject first = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call").put("params", params)
          .toBuffer(), headers).json().getJsonObject("result");
      assertEquals("input_required", first.getString("resultType"), first.encode());
      assertEquals("elicitation/create", first.getJsonObject("inputRequests").getJsonObject("confirm").getString("method"));
      assertTrue(ticketExists(294), "nothing is written while the user decides");
      JsonObject retry = params.copy().put("requestState", first.getString("requestState"))
          .put("inputResponses", new JsonObject().put("confirm", new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true))));
      JsonObject done = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 2).put("method", "tools/call").put("params", retry)
          .toBuffer(), headers).json().getJsonObject("result");
      assertEquals("complete", done.getString("resultType"));
      assertEquals(null, done.getValue("isError"), done.encode());
      assertTrue(!ticketExists(294));
    }
  }
}
