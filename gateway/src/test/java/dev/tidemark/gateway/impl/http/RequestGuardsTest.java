package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RequestGuardsTest {

  private final RequestGuards loopbackOnly = new RequestGuards(Set.of("https://app.example"), true, List.of("main"), "/mcp");
  private final RequestGuards anyHost = new RequestGuards(Set.of(), false, List.of("main"), "/mcp");

  private static MultiMap headers(String... nameValues) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap();
    for (int i = 0; i < nameValues.length; i += 2) {
      h.add(nameValues[i], nameValues[i + 1]);
    }
    return h;
  }

  private static void assertRefused(int status, String message, Runnable check) {
    Refusal r = assertThrows(Refusal.class, check::run);
    assertEquals(status, r.answer().status());
    JsonObject error = r.answer().body().getJsonObject("error");
    assertEquals(-32600, error.getInteger("code"));
    assertEquals(message, error.getString("message"));
    assertTrue(r.answer().body().containsKey("id") && r.answer().body().getValue("id") == null, "the id is null: the body was not read");
  }

  @Test
  void aHeaderThatMustBeSingleIsRefusedWhenSentTwice() {
    for (String name : new String[] {"Authorization", "Origin", "Host"}) {
      assertRefused(400, "Send at most one " + name + " header; this request has several.",
          () -> anyHost.check(headers(name, "a", name.toLowerCase(), "b"), null));
    }
  }

  @Test
  void anOriginOutsideTheAllowlistThatIsNotLoopbackIsRefused() {
    assertRefused(403, "Requests from this Origin are not allowed.", () -> anyHost.check(headers("Origin", "https://evil.example"), null));
    assertEquals("main", loopbackOnly.check(headers("Origin", "https://app.example", "Host", "127.0.0.1:8080"), null));
    assertEquals("main", anyHost.check(headers("Origin", "http://localhost:3000"), null));
  }

  @Test
  void aLoopbackServerRefusesAHostThatIsNotLoopbackAndOthersDoNot() {
    assertRefused(403, "This server only answers requests addressed to a loopback host.",
        () -> loopbackOnly.check(headers("Host", "rebound.example:8080"), null));
    assertEquals("main", anyHost.check(headers("Host", "rebound.example:8080"), null));
  }

  @Test
  void theOriginIsCheckedBeforeTheHost() {
    assertRefused(403, "Requests from this Origin are not allowed.",
        () -> loopbackOnly.check(headers("Origin", "https://evil.example", "Host", "rebound.example"), null));
  }

  @Test
  void onlyTheServedDatabaseMayBeNamedInThePath() {
    assertEquals("main", anyHost.check(headers(), "main"));
    assertEquals("main", anyHost.check(headers(), null));
    assertRefused(404, "No database is served at this path; the endpoints are /mcp (main), /mcp/main.", () -> anyHost.check(headers(), "billing"));
  }

  @Test
  void everyServedDatabaseMayBeNamedAndTheBarePathIsTheDefault() {
    RequestGuards several = new RequestGuards(Set.of(), false, List.of("main", "sales"), "/mcp");
    assertEquals("sales", several.check(headers(), "sales"));
    assertEquals("main", several.check(headers(), "main"));
    assertEquals("main", several.check(headers(), null));
    assertRefused(404, "No database is served at this path; the endpoints are /mcp (main), /mcp/main, /mcp/sales.",
        () -> several.check(headers(), "billing"));
  }

  @Test
  void aPostMustCarryJsonWhateverItsParameters() {
    RequestGuards.requireJson("application/json");
    RequestGuards.requireJson("Application/JSON ; charset=utf-8");
    for (String wrong : new String[] {null, "", ";", "text/plain", "application/json-seq", "application/jsonx; a=b"}) {
      assertRefused(415, "Send the JSON-RPC message with Content-Type: application/json.", () -> RequestGuards.requireJson(wrong));
    }
  }

  @Test
  void acceptNamesTheMediaTypeOrAnything() {
    assertTrue(RequestGuards.accepts("application/json, text/event-stream", "text/event-stream"));
    assertTrue(RequestGuards.accepts("*/*", "text/event-stream"));
    assertFalse(RequestGuards.accepts("application/json", "text/event-stream"));
    assertFalse(RequestGuards.accepts(null, "text/event-stream"));
  }
}
