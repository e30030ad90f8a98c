package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.call.Eras;
import static dev.tidemark.gateway.impl.era.EraFixtures.CHANNELS;
import static dev.tidemark.gateway.impl.era.EraFixtures.WHO;
import static dev.tidemark.gateway.impl.era.EraFixtures.headers;
import static dev.tidemark.gateway.impl.era.EraFixtures.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/** The checks that come before the session is looked up, and how a call is built from the session. */
class LegacyEraTest {

  /** No session store: every case here must be decided before one is needed. */
  private final LegacyEra era = new LegacyEra(null, null, null, EraFixtures.READS);

  private static JsonObject refusal(Future<Turn> turn, int status) {
    Refusal r = assertInstanceOf(Refusal.class, turn.cause());
    assertEquals(status, r.answer().status());
    return r.answer().body();
  }

  @Test
  void anUnsupportedVersionHeaderIsRefusedExceptOnInitialize() {
    JsonObject body = refusal(era.turn(headers("MCP-Protocol-Version", "2024-01-01", "Mcp-Session-Id", "s"), WHO,
        parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"), CHANNELS), 400);
    assertEquals(-32600, body.getJsonObject("error").getInteger("code"));
    assertEquals(1, body.getValue("id"));
    assertTrue(body.getJsonObject("error").getString("message").startsWith("Unsupported MCP-Protocol-Version; supported: 2026-07-28, "));
  }

  @Test
  void initializeWithoutAnIdIsRefused() {
    JsonObject body = refusal(era.turn(headers(), WHO, parse("{\"jsonrpc\":\"2.0\",\"method\":\"initialize\"}"),
        CHANNELS), 400);
    assertEquals("initialize is a request: give it an id.", body.getJsonObject("error").getString("message"));
  }

  @Test
  void anOversizedClientDescriptionIsAnErrorResponseAndOpensNoSession() {
    String big = "x".repeat(LegacyEra.MAX_CLIENT_DESCRIPTION_BYTES);
    JsonObject body = refusal(era.turn(headers(), WHO, parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
        + "\"params\":{\"clientInfo\":{\"name\":\"" + big + "\"}}}"), CHANNELS), 200);
    assertEquals(-32602, body.getJsonObject("error").getInteger("code"));
  }

  @Test
  void aRequestWithoutASessionIsRefused() {
    JsonObject body = refusal(era.turn(headers(), WHO, parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\"}"),
        CHANNELS), 400);
    assertEquals("Send the Mcp-Session-Id header that initialize returned.", body.getJsonObject("error").getString("message"));
    assertEquals("a", body.getValue("id"));
  }

  @Test
  void theCallTakesVersionCapabilitiesAndLogLevelFromTheSession() {
    JsonObject session = new JsonObject().put("protocol_version", "2025-06-18").put("log_level", "info")
        .put("client_capabilities", new JsonObject().put("elicitation", new JsonObject()));
    Call call = LegacyEra.call(headers("Accept", "text/event-stream"), WHO,
        parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"status\"}}"), "s-1", session, CHANNELS, EraFixtures.READS);
    assertFalse(call.modern());
    assertEquals("s-1", call.sessionId());
    assertEquals("2025-06-18", call.protocolVersion());
    assertEquals("info", call.logLevel());
    assertTrue(call.clientCan("elicitation"));
    assertEquals("s-1|5", call.inflightKey());
    assertTrue(call.channel().streaming());
  }

  @Test
  void onlyAToolCallThatMaySendSomethingFirstStreams() {
    JsonObject quiet = new JsonObject().put("client_capabilities", new JsonObject());
    MultiMap sse = headers("Accept", "text/event-stream");
    assertFalse(LegacyEra.call(sse, WHO, parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}"), "s", quiet,
        CHANNELS, EraFixtures.READS).channel().streaming());
    assertTrue(LegacyEra.call(sse, WHO, parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\","
        + "\"params\":{\"_meta\":{\"progressToken\":1}}}"), "s", quiet, CHANNELS, EraFixtures.READS).channel().streaming());
    JsonObject chatty = new JsonObject().put("log_level", "debug");
    assertFalse(LegacyEra.call(sse, WHO, parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}"), "s", chatty,
        CHANNELS, EraFixtures.READS).channel().streaming(), "only tools/call streams");
  }

  @Test
  void aToolCallThatWillOnlyAnswerIsOneJsonBodyThoughTheClientAcceptsAStreamAndCanBeAsked() {
    JsonObject host = new JsonObject().put("client_capabilities", new JsonObject().put("elicitation", new JsonObject())
        .put("sampling", new JsonObject()).put("roots", new JsonObject()));
    MultiMap both = headers("Accept", "application/json, text/event-stream");
    Envelope call = parse("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"get_row\"}}");
    assertFalse(LegacyEra.call(both, WHO, call, "s", host, CHANNELS, name -> Eras.Voice.READ).channel().streaming(),
        "a read never asks the client anything");
    assertTrue(LegacyEra.call(both, WHO, call, "s", host, CHANNELS, name -> Eras.Voice.CHANGE).channel().streaming(),
        "a change may ask for consent");
    assertTrue(LegacyEra.call(both, WHO, call, "s", host, CHANNELS, name -> Eras.Voice.ANY).channel().streaming(),
        "an extension may ask anything");
    JsonObject errorsOnly = host.copy().put("log_level", "error");
    assertFalse(LegacyEra.call(both, WHO, call, "s", errorsOnly, CHANNELS, name -> Eras.Voice.READ).channel().streaming(),
        "a read logs nothing above warning");
    JsonObject warnings = host.copy().put("log_level", "warning");
    assertTrue(LegacyEra.call(both, WHO, call, "s", warnings, CHANNELS, name -> Eras.Voice.READ).channel().streaming());
  }
}
