package dev.tidemark.gateway.impl.jsonrpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.gateway.impl.http.Refusal;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class EnvelopeTest {

  private static Envelope parse(String body) {
    return Envelope.parse(Buffer.buffer(body));
  }

  /** Asserts the refusal's status, JSON-RPC code, id and message. */
  private static void assertRefused(String body, int status, int code, Object id, String message) {
    Refusal r = assertThrows(Refusal.class, () -> parse(body));
    assertEquals(status, r.answer().status(), body);
    JsonObject answer = r.answer().body();
    assertEquals(id, answer.getValue("id"), body);
    assertEquals(code, answer.getJsonObject("error").getInteger("code"), body);
    assertEquals(message, answer.getJsonObject("error").getString("message"), body);
  }

  @Test
  void aRequestIsReadWithItsIdMethodParamsAndMeta() {
    Envelope env = parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"progressToken\":1},\"x\":2}}");
    assertEquals(7, env.id());
    assertTrue(env.hasId());
    assertEquals("tools/list", env.method());
    assertEquals(2, env.params().getInteger("x"));
    assertEquals(1, env.meta().getInteger("progressToken"));
    assertFalse(env.isResponse());
  }

  @Test
  void missingParamsAndANullMetaAreEmptyObjects() {
    Envelope env = parse("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    assertFalse(env.hasId());
    assertEquals(new JsonObject(), env.params());
    assertEquals(new JsonObject(), parse("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"m\",\"params\":{\"_meta\":null}}").meta());
  }

  @Test
  void aClientsResponseToAServerRequestHasNoMethod() {
    Envelope env = parse("{\"jsonrpc\":\"2.0\",\"id\":\"tidemark-1\",\"result\":{}}");
    assertTrue(env.isResponse());
    assertEquals("tidemark-1", env.message().getString("id"));
  }

  @Test
  void whatIsNotOneJsonObjectIsRefusedWithANullId() {
    assertRefused("{", 400, -32700, null, "The body is not valid JSON.");
    assertRefused("[{\"jsonrpc\":\"2.0\"}]", 400, -32600, null, "JSON-RPC batches are not supported: send one message per POST.");
    assertRefused("", 400, -32600, null, "The body must be one JSON-RPC message (a JSON object).");
    assertRefused("42", 400, -32600, null, "The body must be one JSON-RPC message (a JSON object).");
  }

  @Test
  void anIdThatIsNeitherAStringNorAnIntegerIsRefusedWithANullId() {
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", 400, -32600, null, "The id must be a string or an integer.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", 400, -32600, null, "The id must be a string or an integer.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", 400, -32600, null, "The id must be a string or an integer.");
  }

  @Test
  void aWrongVersionOrMethodIsRefusedWithTheRequestsId() {
    assertRefused("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", 400, -32600, 3, "The message must carry \"jsonrpc\": \"2.0\".");
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":3}", 400, -32600, 3, "The message has no method.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"result\":{}}", 400, -32600, null, "The message has no method.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":5}", 400, -32600, 3, "The method must be a string.");
  }

  @Test
  void badParamsAreAnErrorResponseToARequestAndAnHttpRefusalOfANotification() {
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":[1]}", 200, -32602, 3, "The params must be an object.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[1]}", 400, -32602, null, "The params must be an object.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":{\"_meta\":1}}", 200, -32602, 3, "params._meta must be an object.");
    assertRefused("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"_meta\":1}}", 400, -32602, null, "params._meta must be an object.");
  }

  @Test
  void integralNumbersOfAnyWidthAreValidIds() {
    assertTrue(Envelope.validId(1));
    assertTrue(Envelope.validId(1L << 40));
    assertTrue(Envelope.validId(new java.math.BigInteger("12")));
    assertTrue(Envelope.validId("x"));
    assertFalse(Envelope.validId(2.0));
    assertFalse(Envelope.validId(null));
    assertNull(parse("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}").id());
  }
}
