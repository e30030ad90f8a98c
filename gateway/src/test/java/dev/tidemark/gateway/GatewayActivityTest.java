package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class GatewayActivityTest {

  @Test
  void countsEachCallersCallsErrorsAndRefusalsOfTheLastHourWithItsStreams() {
    AtomicLong now = new AtomicLong(1_000_000_000_000L);
    GatewayActivity activity = new GatewayActivity(now::get);
    activity.streamsFrom(() -> Map.of("c1", 2));
    activity.call("c1", "bot", "get_row", "ok");
    activity.call("c1", "bot", "get_row", "NOT_FOUND");
    activity.call("c1", "bot", "query", "ok");
    activity.refused("c1", "bot", "rate_limit");
    activity.refused("c1", "bot", "queue");
    JsonObject c1 = activity.snapshot().getJsonObject("c1");
    assertEquals("bot", c1.getString("name"));
    assertEquals(2, c1.getInteger("streams"));
    assertEquals(new JsonObject().put("get_row", 2L).put("query", 1L), c1.getJsonObject("calls"));
    assertEquals(new JsonObject().put("NOT_FOUND", 1L), c1.getJsonObject("errors"));
    assertEquals(1L, c1.getLong("rate_limited"));
    assertEquals(1L, c1.getLong("queue_refused"));

    now.addAndGet(61 * 60_000L);
    activity.call("c2", "other", "status", "ok");
    JsonObject later = activity.snapshot();
    assertEquals(new JsonObject(), later.getJsonObject("c1").getJsonObject("calls"), "an hour later only its streams are left");
    assertEquals(1L, later.getJsonObject("c2").getJsonObject("calls").getLong("status"));
    assertFalse(later.getJsonObject("c1").containsKey("missing"));
  }
}
