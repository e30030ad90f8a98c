package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
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
  private NodeHarness node;
  private String url;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    // its fixtures go in before the roles start: the shared database must exist first, whichever class of this JVM runs first
    ServiceHarness.prepareDatabase(infra);
    // a table of its own, so that removals here never change what other tests count
    sql("CREATE TABLE IF NOT EXISTS consent_notes (id int PRIMARY KEY, body text NOT NULL)");
    sql("GRANT SELECT, INSERT, UPDATE, DELETE ON consent_notes TO tidemark_writer");
    sql("GRANT SELECT ON consent_notes TO tidemark_reader");
    sql("DELETE FROM consent_notes");
    sql("INSERT INTO consent_notes SELECT g, 'note ' || g FROM generate_series(1, 10) g");
    // the operator reviewed the trigger that fails every insert with a serialization failure
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command,changelog",
        Map.of(ConfigKey.DATABASE_REVIEWED_FUNCTIONS, "public.conflict_always_fail"));
    url = node.mcpUrl();
  }

  private void sql(String statement) {
    try (Connection conn = ServiceHarness.jdbc(infra)) {
      conn.createStatement().execute(statement);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(node);
  }

  private boolean ticketExists(int id) throws Exception {
    try (Connection conn = ServiceHarness.jdbc(infra);
         ResultSet rs = conn.createStatement().executeQuery("SELECT count(*) FROM consent_notes WHERE id = " + id)) {
      rs.next();
      return rs.getInt(1) == 1;
    }
  }

  private static JsonObject deletion(int id) {
    return new JsonObject().put("table", "consent_notes").put("key", id);
  }

  private String plan(McpHttpClient c, int id) {
    JsonObject plan = c.callTool("delete_rows", deletion(id)).getJsonObject("structuredContent");
    assertEquals(true, plan.getBoolean("confirmation_required"), plan.encode());
    return plan.getString("plan_id");
  }

  private MultiMap streamHeaders(McpHttpClient c) {
    return MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
        .add("Content-Type", "application/json").add("Accept", "application/json, text/event-stream")
        .add("Mcp-Session-Id", c.sessionId()).add("MCP-Protocol-Version", "2025-11-25");
  }

  private JsonObject commitAnswering(McpHttpClient c, int id, String planId, JsonObject answer) throws Exception {
    JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", "commit-" + id).put("method", "tools/call").put("params",
        new JsonObject().put("name", "delete_rows").put("arguments", deletion(id).put("plan_id", planId).put("idempotency_key", "consent-" + id)));
    try (SseStream stream = SseStream.open(HttpMethod.POST, url, streamHeaders(c), call.toBuffer())) {
      JsonObject ask = stream.await("elicitation/create", 15_000);
      assertNotNull(ask, "the user is asked on the call's own stream");
      String message = ask.getJsonObject("params").getString("message");
      assertTrue(message.startsWith("Allow delete_rows?"), ask.encode());
      assertTrue(message.contains("\nDELETE public.consent_notes [" + id + "] {\"id\":" + id + ","),
          "the person who consents sees the row, not only a count: " + message);
      assertEquals(202, c.post(new JsonObject().put("jsonrpc", "2.0").put("id", ask.getValue("id")).put("result", answer)).status());
      JsonObject response = stream.await("response", 15_000);
      assertNotNull(response);
      return response.getJsonObject("result");
    }
  }

  @Test
  void anElicitedYesCommitsTheRemovalAndANoWritesNothing() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize(new JsonObject().put("elicitation", new JsonObject()));

      JsonObject yes = commitAnswering(c, 1, plan(c, 1), new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true)));
      assertEquals(null, yes.getValue("isError"), yes.encode());
      assertEquals("commit", yes.getJsonObject("structuredContent").getString("mode"));
      assertTrue(!ticketExists(1), "the user allowed it: the row is gone");

      JsonObject no = commitAnswering(c, 2, plan(c, 2), new JsonObject().put("action", "decline"));
      assertEquals(true, no.getBoolean("isError"));
      assertEquals("DECISION_REQUIRED", no.getJsonObject("structuredContent").getJsonObject("error").getString("code"));
      assertTrue(ticketExists(2), "declined: nothing was written");
    }
  }

  @Test
  void aChangeThatKeepsHittingSerializationFailuresEndsInConflictAndWritesNothing() throws Exception {
    sql("CREATE TABLE IF NOT EXISTS conflict_always (id int PRIMARY KEY)");
    sql("GRANT SELECT, INSERT ON conflict_always TO tidemark_writer");
    sql("CREATE OR REPLACE FUNCTION conflict_always_fail() RETURNS trigger LANGUAGE plpgsql AS "
        + "$$ BEGIN RAISE EXCEPTION 'simulated' USING ERRCODE = 'serialization_failure'; END $$");
    sql("DROP TRIGGER IF EXISTS conflict_always_fail ON conflict_always");
    sql("CREATE TRIGGER conflict_always_fail BEFORE INSERT ON conflict_always FOR EACH ROW EXECUTE FUNCTION conflict_always_fail()");
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject result = c.callTool("insert_rows", new JsonObject().put("table", "conflict_always")
          .put("rows", new io.vertx.core.json.JsonArray().add(new JsonObject().put("id", 1))));
      JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
      assertEquals("CONFLICT", error.getString("code"), result.encode());
      assertEquals(true, error.getBoolean("retriable"));
    }
    try (Connection conn = ServiceHarness.jdbc(infra);
         ResultSet rs = conn.createStatement().executeQuery("SELECT count(*) FROM conflict_always")) {
      rs.next();
      assertEquals(0, rs.getInt(1));
    }
  }

  @Test
  void aClientThatCannotBeAskedGetsDecisionRequiredUnlessItConfirms() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      String planId = plan(c, 3);
      JsonObject refused = c.callTool("delete_rows", deletion(3).put("plan_id", planId).put("idempotency_key", "consent-3"));
      assertEquals("DECISION_REQUIRED", refused.getJsonObject("structuredContent").getJsonObject("error").getString("code"));
      assertTrue(ticketExists(3));
      JsonObject confirmed = c.callTool("delete_rows", deletion(3).put("plan_id", planId).put("idempotency_key", "consent-3").put("confirm", true));
      assertEquals(null, confirmed.getValue("isError"), confirmed.encode());
      assertTrue(!ticketExists(3));
    }
  }

  @Test
  void onTheModernEraConsentIsAnInputRequiredResultAndTheRetryCarriesTheAnswer() throws Exception {
    try (McpHttpClient c = new McpHttpClient(url, NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      String planId = plan(c, 4);
      JsonObject arguments = deletion(4).put("plan_id", planId).put("idempotency_key", "consent-4");
      JsonObject meta = new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
          .put("io.modelcontextprotocol/clientCapabilities", new JsonObject().put("elicitation", new JsonObject()));
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
          .add("Content-Type", "application/json").add("Accept", "application/json").add("MCP-Protocol-Version", "2026-07-28")
          .add("Mcp-Method", "tools/call").add("Mcp-Name", "delete_rows");
      JsonObject params = new JsonObject().put("name", "delete_rows").put("arguments", arguments).put("_meta", meta);
      JsonObject first = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call").put("params", params)
          .toBuffer(), headers).json().getJsonObject("result");
      assertEquals("input_required", first.getString("resultType"), first.encode());
      assertEquals("elicitation/create", first.getJsonObject("inputRequests").getJsonObject("confirm").getString("method"));
      assertTrue(ticketExists(4), "nothing is written while the user decides");
      JsonObject retry = params.copy().put("requestState", first.getString("requestState"))
          .put("inputResponses", new JsonObject().put("confirm", new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true))));
      JsonObject done = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 2).put("method", "tools/call").put("params", retry)
          .toBuffer(), headers).json().getJsonObject("result");
      assertEquals("complete", done.getString("resultType"));
      assertEquals(null, done.getValue("isError"), done.encode());
      assertTrue(!ticketExists(4));
    }
  }
}
