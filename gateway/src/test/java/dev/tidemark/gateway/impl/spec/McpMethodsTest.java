package dev.tidemark.gateway.impl.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class McpMethodsTest {

  @Test
  void aServerRequestNeedsTheCapabilityItsMethodBelongsTo() {
    assertEquals("elicitation", McpMethods.capability(McpMethods.ELICITATION_CREATE));
    assertEquals("sampling", McpMethods.capability("sampling/createMessage"));
    assertEquals("roots", McpMethods.capability("roots/list"));
  }
}
