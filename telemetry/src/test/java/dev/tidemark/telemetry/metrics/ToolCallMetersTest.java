package dev.tidemark.telemetry.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ToolCallMetersTest {

  @Test
  void labelsComeFromFixedSetsWhateverTheCallerSent() {
    assertEquals("get_row", ToolCallMeters.toolLabel("get_row"));
    assertEquals("other", ToolCallMeters.toolLabel("SELECT password FROM users"));
    assertEquals("other", ToolCallMeters.toolLabel(42));
    assertEquals("ok", ToolCallMeters.outcome(new JsonObject().put("structuredContent", new JsonObject())));
    assertEquals("NOT_FOUND", ToolCallMeters.outcome(error("NOT_FOUND")));
    assertEquals("other", ToolCallMeters.outcome(error("secret row value")));
    assertEquals("other", ToolCallMeters.outcome(new JsonObject().put("isError", true)));
  }

  @Test
  void aFailedCallCountsAsAProtocolError() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    ToolCallMeters meters = new ToolCallMeters(registry);
    meters.record("query", () -> Future.succeededFuture(error("TIMEOUT")));
    meters.record("query", () -> Future.failedFuture("unknown tool"));
    assertEquals(1.0, registry.get(Meters.TOOL_CALLS).tags("tool", "query", "outcome", "TIMEOUT").counter().count());
    assertEquals(1.0, registry.get(Meters.TOOL_CALLS).tags("tool", "query", "outcome", "protocol_error").counter().count());
    assertEquals(2, registry.get(Meters.TOOL_CALL_DURATION).tags("tool", "query").timer().count());
  }

  private static JsonObject error(String code) {
    return new JsonObject().put("isError", true)
        .put("structuredContent", new JsonObject().put("error", new JsonObject().put("code", code)));
  }
}
