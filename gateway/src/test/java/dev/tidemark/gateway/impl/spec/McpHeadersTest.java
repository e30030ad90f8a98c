package dev.tidemark.gateway.impl.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class McpHeadersTest {

  @Test
  void aBase64WrappedValueIsDecodedAsUtf8() {
    assertEquals("tidemark://row/caf\u00e9/1", McpHeaders.decodeValue("=?base64?dGlkZW1hcms6Ly9yb3cvY2Fmw6kvMQ==?="));
  }

  @Test
  void aPlainValueIsTakenAsItIs() {
    assertEquals("list_tables", McpHeaders.decodeValue("list_tables"));
    assertEquals("=?base64?", McpHeaders.decodeValue("=?base64?"));
    assertNull(McpHeaders.decodeValue(null));
  }

  @Test
  void aWrappedValueThatIsNotBase64NamesNothing() {
    assertNull(McpHeaders.decodeValue("=?base64?not base64!?="));
  }
}
