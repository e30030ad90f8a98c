package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.spec.McpMethods;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.http.Refusal;
import dev.tidemark.gateway.impl.jsonrpc.Envelope;
import dev.tidemark.gateway.impl.spec.McpVersions;
import dev.tidemark.gateway.impl.spec.Meta;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ModernEraTest {

  private final ModernEra era = new ModernEra(new ParamHeaders(java.util.Map.of()));

  private static Envelope request(String method, JsonObject params, boolean withId) {
    JsonObject msg = new JsonObject().put("jsonrpc", "2.0").put("method", method).put("params", params);
    if (withId) {
      msg.put("id", 9);
    }
    return EraFixtures.parse(msg.encode());
  }

  private static JsonObject meta(String version) {
    return new JsonObject().put(Meta.VERSION, version).put(Meta.CAPABILITIES, new JsonObject());
  }

  private static MultiMap headers(String version, String method, String name) {
    MultiMap h = EraFixtures.headers();
    if (version != null) {
      h.add("MCP-Protocol-Version", version);
    }
    if (method != null) {
      h.add("Mcp-Method", method);
    }
    if (name != null) {
      h.add("Mcp-Name", name);
    }
    return h;
  }

  private void assertRefused(int status, int code, MultiMap headers, Envelope env) {
    Refusal r = assertThrows(Refusal.class, () -> era.turn(headers, EraFixtures.WHO, env, EraFixtures.CHANNELS));
    assertEquals(status, r.answer().status());
    assertEquals(code, r.answer().body().getJsonObject("error").getInteger("code"));
    assertEquals(9, r.answer().body().getValue("id"));
  }

  @Test
  void theVersionHeaderMustBeSentAndEqualTheBodys() {
    Envelope env = request("tools/list", new JsonObject().put("_meta", meta("2026-07-28")), true);
    assertRefused(400, -32020, headers(null, "tools/list", null), env);
    assertRefused(400, -32020, headers("2025-11-25", "tools/list", null), env);
  }

  @Test
  void anUnknownStatelessVersionIsRefusedWithTheSupportedOnes() {
    Envelope env = request("tools/list", new JsonObject().put("_meta", meta("2027-01-01")), true);
    Refusal r = assertThrows(Refusal.class, () -> era.turn(headers("2027-01-01", "tools/list", null), EraFixtures.WHO, env, EraFixtures.CHANNELS));
    assertEquals(400, r.answer().status());
    JsonObject error = r.answer().body().getJsonObject("error");
    assertEquals(-32022, error.getInteger("code"));
    assertEquals("2027-01-01", error.getJsonObject("data").getString("requested"));
    assertEquals(McpVersions.ALL, error.getJsonObject("data").getJsonArray("supported").getList());
  }

  @Test
  void theMethodAndNameHeadersMustRepeatTheBody() {
    JsonObject params = new JsonObject().put("_meta", meta("2026-07-28")).put("name", "status");
    assertRefused(400, -32020, headers("2026-07-28", "tools/list", "status"), request("tools/call", params, true));
    assertRefused(400, -32020, headers("2026-07-28", "tools/call", null), request("tools/call", params, true));
    assertRefused(400, -32020, headers("2026-07-28", "tools/call", "query"), request("tools/call", params, true));
    JsonObject read = new JsonObject().put("_meta", meta("2026-07-28")).put("uri", "tidemark://schema");
    Turn ok = era.turn(headers("2026-07-28", "resources/read", "=?base64?dGlkZW1hcms6Ly9zY2hlbWE=?="), EraFixtures.WHO, request("resources/read", read, true), EraFixtures.CHANNELS);
    assertInstanceOf(Turn.Run.class, ok);
  }

  @Test
  void aNotificationThatPassesTheChecksIsAccepted() {
    Turn turn = era.turn(headers("2026-07-28", "notifications/x", null), EraFixtures.WHO,
        request("notifications/x", new JsonObject().put("_meta", meta("2026-07-28")), false), EraFixtures.CHANNELS);
    assertEquals(202, assertInstanceOf(Turn.Answered.class, turn).answer().status());
  }

  @Test
  void anUnknownLogLevelIsAnErrorResponseNotAnHttpRefusal() {
    JsonObject params = new JsonObject().put("_meta", meta("2026-07-28").put(Meta.LOG_LEVEL, "loud"));
    assertRefused(200, -32602, headers("2026-07-28", "tools/list", null), request("tools/list", params, true));
  }

  @Test
  void theCallCarriesWhatTheRequestSaysAboutItself() {
    JsonObject caps = new JsonObject().put("elicitation", new JsonObject());
    JsonObject params = new JsonObject().put("name", "status").put("inputResponses", new JsonObject().put("confirm", new JsonObject()))
        .put("_meta", meta("2026-07-28").put(Meta.CAPABILITIES, caps).put(Meta.LOG_LEVEL, "info"));
    Call call = ((Turn.Run) era.turn(headers("2026-07-28", "tools/call", "status"), EraFixtures.WHO, request("tools/call", params, true), EraFixtures.CHANNELS)).call();
    assertTrue(call.modern());
    assertEquals("2026-07-28", call.protocolVersion());
    assertEquals("main", call.database());
    assertEquals(EraFixtures.WHO.caller(), call.caller());
    assertNull(call.sessionId());
    assertEquals(caps, call.clientCapabilities());
    assertEquals("info", call.logLevel());
    assertTrue(call.inputResponses().containsKey("confirm"));
    assertEquals(42L, call.authenticatedAtNanos());
  }

  @Test
  void aCallStreamsOnlyWhenItMaySendSomethingFirstAndTheClientAcceptsAStream() {
    JsonObject plain = new JsonObject().put("_meta", meta("2026-07-28"));
    JsonObject progress = new JsonObject().put("_meta", meta("2026-07-28").put("progressToken", "p"));
    MultiMap sse = headers("2026-07-28", "tools/list", null).add("Accept", "application/json, text/event-stream");
    MultiMap json = headers("2026-07-28", "tools/list", null).add("Accept", "application/json");
    assertFalse(callOf(sse, request("tools/list", plain, true)).channel().streaming());
    assertTrue(callOf(sse, request("tools/list", progress, true)).channel().streaming());
    assertFalse(callOf(json, request("tools/list", progress, true)).channel().streaming());
    MultiMap listen = headers("2026-07-28", McpMethods.SUBSCRIPTIONS_LISTEN, null);
    assertTrue(callOf(listen, request(McpMethods.SUBSCRIPTIONS_LISTEN, plain, true)).channel().streaming(), "a listen stream always streams");
  }

  private Call callOf(MultiMap headers, Envelope env) {
    return ((Turn.Run) era.turn(headers, EraFixtures.WHO, env, EraFixtures.CHANNELS)).call();
  }
}
