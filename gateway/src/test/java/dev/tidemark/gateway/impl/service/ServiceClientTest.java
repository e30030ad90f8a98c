package dev.tidemark.gateway.impl.service;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ServiceClientTest {

  @Test
  void aLongPollingCallIsGivenItsWaitOnTopOfTheSendTimeoutAndNoMore() {
    assertEquals(0, ServiceClient.waitMs(new JsonObject()));
    assertEquals(0, ServiceClient.waitMs(new JsonObject().put("wait_ms", "soon")));
    assertEquals(0, ServiceClient.waitMs(new JsonObject().put("wait_ms", -5)));
    assertEquals(12_000, ServiceClient.waitMs(new JsonObject().put("wait_ms", 12_000)));
    assertEquals(30_000, ServiceClient.waitMs(new JsonObject().put("wait_ms", 10_000_000)));
  }
}
