package dev.tidemark.gateway.impl.spec;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.regex.Pattern;

/** The HTTP headers the MCP transport defines, and the challenge every refused credential gets. */
public final class McpHeaders {

  public static final String SESSION = "Mcp-Session-Id";
  public static final String VERSION = "MCP-Protocol-Version";
  public static final String METHOD = "Mcp-Method";
  public static final String NAME = "Mcp-Name";
  public static final String LAST_EVENT_ID = "Last-Event-ID";
  /** The challenge of every 401. */
  public static final String INVALID_TOKEN_CHALLENGE = "Bearer realm=\"tidemark\", error=\"invalid_token\"";

  /** How a header value that is not plain ASCII is sent: {@code =?base64?<base64 of its UTF-8 bytes>?=}. */
  public static final String B64_PREFIX = "=?base64?";
  public static final String B64_SUFFIX = "?=";
  private static final Pattern BASE64 = Pattern.compile("([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?");

  private McpHeaders() {}

  /**
   * A header value as the client meant it: the {@code =?base64?...?=} form for values that are not
   * plain ASCII decoded strictly (padded, the base64 alphabet only, UTF-8), anything else
   * literally. Null when the encoded form is invalid.
   */
  public static String decodeValue(String value) {
    if (value == null || !value.startsWith(B64_PREFIX) || !value.endsWith(B64_SUFFIX)
        || value.length() < B64_PREFIX.length() + B64_SUFFIX.length()) {
      return value;
    }
    String encoded = value.substring(B64_PREFIX.length(), value.length() - B64_SUFFIX.length());
    if (!BASE64.matcher(encoded).matches()) {
      return null;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(Base64.getDecoder().decode(encoded))).toString();
    } catch (CharacterCodingException | IllegalArgumentException e) {
      return null;
    }
  }

}
