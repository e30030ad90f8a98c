package dev.tidemark.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.node.TidemarkNode;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The 2026-07-28 revision, which no released client speaks yet, tested at the HTTP level from the
 * revision's text: input_required results in place of server requests (and -32021 for a client
 * that cannot answer them), Mcp-Param headers checked against the arguments, and a listen stream
 * that the server ends gracefully.
 */
@ExtendWith(InfraExtension.class)
class ModernEraIT {

  private static JsonObject meta(JsonObject capabilities) {
    return new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
        .put("io.modelcontextprotocol/clientCapabilities", capabilities)
        .put("io.modelcontextprotocol/clientInfo", new JsonObject().put("name", "modern-it").put("version", "1"));
  }

  private static MultiMap headers(String method, String name) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap().add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream").add("MCP-Protocol-Version", "2026-07-28").add("Mcp-Method", method);
    return name == null ? h : h.add("Mcp-Name", name);
  }

  @Test
  void aToolThatNeedsTheUserAnswersInputRequiredAndCompletesOnTheRetry(SharedInfra infra) throws Exception {
    TidemarkNode node = FixtureNode.start(infra);
    try (McpHttpClient c = new McpHttpClient(FixtureNode.url(node), null)) {
      JsonObject params = new JsonObject().put("name", "test_elicitation").put("arguments", new JsonObject().put("message", "Who are you?"))
          .put("_meta", meta(new JsonObject().put("elicitation", new JsonObject())));
      McpHttpClient.Reply first = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call")
          .put("params", params).toBuffer(), headers("tools/call", "test_elicitation"));
      JsonObject result = first.json().getJsonObject("result");
      assertEquals("input_required", result.getString("resultType"), first.body());
      JsonObject requests = result.getJsonObject("inputRequests");
      assertEquals(1, requests.size());
      String key = requests.fieldNames().iterator().next();
      assertEquals("elicitation/create", requests.getJsonObject(key).getString("method"));
      assertNotNull(result.getString("requestState"));

      JsonObject retry = params.copy().put("requestState", result.getString("requestState")).put("inputResponses", new JsonObject()
          .put(key, new JsonObject().put("action", "accept").put("content", new JsonObject().put("username", "ada").put("email", "ada@example.com"))));
      McpHttpClient.Reply second = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 2).put("method", "tools/call")
          .put("params", retry).toBuffer(), headers("tools/call", "test_elicitation"));
      JsonObject done = second.json().getJsonObject("result");
      assertEquals("complete", done.getString("resultType"));
      assertTrue(done.getJsonArray("content").getJsonObject(0).getString("text").contains("ada@example.com"), second.body());

      JsonObject noCapability = params.copy().put("_meta", meta(new JsonObject()));
      McpHttpClient.Reply refused = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 3).put("method", "tools/call")
          .put("params", noCapability).toBuffer(), headers("tools/call", "test_elicitation"));
      assertEquals(400, refused.status(), "a client that did not declare elicitation is never asked: " + refused.body());
      JsonObject missing = refused.json().getJsonObject("error");
      assertEquals(-32021, missing.getInteger("code"));
      assertEquals(new JsonObject().put("elicitation", new JsonObject()), missing.getJsonObject("data").getJsonObject("requiredCapabilities"));

      JsonObject tampered = retry.copy().put("requestState", result.getString("requestState") + "x");
      McpHttpClient.Reply altered = c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 4).put("method", "tools/call")
          .put("params", tampered).toBuffer(), headers("tools/call", "test_elicitation"));
      assertEquals(-32602, altered.json().getJsonObject("error").getInteger("code"), altered.body());
      assertTrue(altered.json().getJsonObject("error").getString("message").contains("without requestState"), altered.body());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  @Test
  void mcpParamHeadersMustMirrorTheArgumentsTheToolMarksWithXMcpHeader(SharedInfra infra) throws Exception {
    TidemarkNode node = FixtureNode.start(infra);
    try (McpHttpClient c = new McpHttpClient(FixtureNode.url(node), null)) {
      JsonObject call = new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "tools/call").put("params", new JsonObject()
          .put("name", "test_header_params").put("arguments", new JsonObject().put("region", "Zürich").put("priority", 7))
          .put("_meta", meta(new JsonObject())));
      McpHttpClient.Reply ok = c.send("POST", call.toBuffer(), headers("tools/call", "test_header_params")
          .add("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=").add("mcp-param-priority", "7"));
      assertEquals(200, ok.status(), ok.body());
      assertTrue(ok.json().getJsonObject("result").getJsonArray("content").getJsonObject(0).getString("text").contains("Zürich"));

      McpHttpClient.Reply missing = c.send("POST", call.toBuffer(), headers("tools/call", "test_header_params")
          .add("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="));
      assertEquals(400, missing.status(), missing.body());
      assertEquals(-32020, missing.json().getJsonObject("error").getInteger("code"));
      assertTrue(missing.json().getJsonObject("error").getString("message").startsWith("Header mismatch: Mcp-Param-Priority is missing"),
          missing.body());

      McpHttpClient.Reply unequal = c.send("POST", call.toBuffer(), headers("tools/call", "test_header_params")
          .add("Mcp-Param-Region", "Zurich").add("Mcp-Param-Priority", "7"));
      assertEquals(400, unequal.status(), unequal.body());
      assertTrue(unequal.json().getJsonObject("error").getString("message").contains("does not equal arguments.region"), unequal.body());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  @Test
  void aListenStreamEndsWithACompleteResultWhenTheNodeStops(SharedInfra infra) throws Exception {
    TidemarkNode node = FixtureNode.start(infra);
    JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", "listen-1").put("method", "subscriptions/listen")
        .put("params", new JsonObject().put("_meta", meta(new JsonObject()))
            .put("notifications", new JsonObject().put("resourceSubscriptions", new JsonArray().add("test://watched-resource"))));
    try (SseStream stream = SseStream.open(HttpMethod.POST, FixtureNode.url(node), headers("subscriptions/listen", null), listen.toBuffer())) {
      assertEquals("notifications/subscriptions/acknowledged", stream.next(10_000).data().getString("method"));
      try (McpHttpClient c = new McpHttpClient(FixtureNode.url(node), null)) {
        c.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 5).put("method", "tools/call")
            .put("params", new JsonObject().put("name", "test_trigger_update").put("_meta", meta(new JsonObject()))).toBuffer(),
            headers("tools/call", "test_trigger_update"));
      }
      JsonObject updated = stream.await("notifications/resources/updated", 10_000);
      assertEquals("test://watched-resource", updated.getJsonObject("params").getString("uri"));
      assertEquals("listen-1", updated.getJsonObject("params").getJsonObject("_meta").getString("io.modelcontextprotocol/subscriptionId"));
      node.close().toCompletionStage().toCompletableFuture().get();
      JsonObject complete = stream.await("response", 10_000);
      assertNotNull(complete, "the server ends the subscription with a response");
      assertEquals("complete", complete.getJsonObject("result").getString("resultType"));
      assertEquals("listen-1", complete.getJsonObject("result").getJsonObject("_meta").getString("io.modelcontextprotocol/subscriptionId"));
    }
  }
}
