package dev.tidemark.gateway.impl.spec;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/** The HTTP headers the MCP transport defines, and the challenge every refused credential gets. */
public final class McpHeaders {

  public static final String SESSION = "Mcp-Session-Id";
  public static final String VERSION = "MCP-Protocol-Version";
  public static final String METHOD = "Mcp-Method";
  public static final String NAME = "Mcp-Name";
  public static final String LAST_EVENT_ID = "Last-Event-ID";
  /** The challenge of every 401. */
  public static final String INVALID_TOKEN_CHALLENGE = "Bearer realm=\"tidemark\", error=\"invalid_token\"";

  private McpHeaders() {}

  /** Decodes the {@code =?base64?...?=} form headers use for values that are not plain ASCII; null when it is not valid base64. */
  public static String decodeValue(String value) {
    if (value != null && value.startsWith("=?base64?") && value.endsWith("?=") && value.length() >= 11) {
      try {
        return new String(Base64.getDecoder().decode(value.substring(9, value.length() - 2)), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return null;
      }
    }
    return value;
  }
}
