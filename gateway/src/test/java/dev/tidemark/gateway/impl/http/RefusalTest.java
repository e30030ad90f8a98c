package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RefusalTest {

  @Test
  void anHttpRefusalIsAnInvalidRequestErrorWithANullId() {
    Refusal r = Refusal.http(403, "no");
    assertEquals(403, r.answer().status());
    assertEquals(new JsonObject().put("jsonrpc", "2.0").put("id", null)
        .put("error", new JsonObject().put("code", -32600).put("message", "no")), r.answer().body());
    assertTrue(r.answer().headers().isEmpty());
  }

  @Test
  void headersAreAddedInOrderToACopy() {
    Refusal plain = Refusal.http(401, "no");
    Refusal challenged = plain.with("WWW-Authenticate", "Bearer").with("Connection", "close");
    assertEquals(List.of("WWW-Authenticate", "Connection"), List.copyOf(challenged.answer().headers().keySet()));
    assertEquals(Map.of(), plain.answer().headers());
    assertEquals(plain.answer().body(), challenged.answer().body());
  }

  @Test
  void itTravelsAsAFailedFuture() {
    Refusal r = Refusal.http(503, "later");
    assertEquals(r, r.future().cause());
  }
}
