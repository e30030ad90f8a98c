package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.spec.McpHeaders;


import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Tool parameters whose input schema marks them with {@code x-mcp-header}: a 2026-07-28 client
 * mirrors each one into an {@code Mcp-Param-{Name}} header, so that intermediaries can route on it
 * without reading the body. The gateway reads the body, so it checks every such header against
 * the argument it mirrors (the revision's "Server Behavior for Custom Headers"): a header that is
 * missing while the argument has a value, present while it has none, not decodable, or not equal
 * to it, is a mismatch. Headers no tool declares are ignored, as the revision asks.
 */
public final class ParamHeaders {

  public static final String ANNOTATION = "x-mcp-header";
  public static final String HEADER_PREFIX = "Mcp-Param-";
  /** RFC 9110 {@code 1*tchar}: what a header name may be made of. */
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  /** Keywords whose values are data, not schemas: an annotation-like key inside them annotates nothing. */
  private static final Set<String> DATA_KEYWORDS = Set.of("enum", "const", "default", "examples", ANNOTATION);
  /** The types a mirrored parameter may have; {@code number} is excluded by the revision. */
  private static final Set<String> TYPES = Set.of("string", "integer", "boolean");
  /** JavaScript's safe integers, the range an integer parameter may mirror. */
  static final long MAX_SAFE_INTEGER = (1L << 53) - 1;

  /** One marked parameter: the chain of {@code properties} keys that reaches it, and its header's name part. */
  record Param(List<String> path, String name) {

    String header() {
      return HEADER_PREFIX + name;
    }

    String pointer() {
      return "arguments." + String.join(".", path);
    }
  }

  private final Map<String, List<Param>> byTool = new LinkedHashMap<>();

  /**
   * @param inputSchemas tool name to its input schema
   * @throws IllegalArgumentException when a schema marks a parameter in a way the revision forbids
   *     (clients drop such a tool, so serving one is a mistake to catch at start)
   */
  public ParamHeaders(Map<String, JsonObject> inputSchemas) {
    inputSchemas.forEach((tool, schema) -> {
      List<Param> params = new ArrayList<>();
      visit(tool, schema, List.of(), true, params);
      Set<String> seen = new HashSet<>();
      for (Param p : params) {
        if (!seen.add(p.name().toLowerCase(Locale.ROOT))) {
          throw new IllegalArgumentException(tool + ": two parameters are marked " + ANNOTATION + " \"" + p.name()
              + "\"; each header name must be unique, whatever its case");
        }
      }
      if (!params.isEmpty()) {
        byTool.put(tool, List.copyOf(params));
      }
    });
  }

  /** The marked parameters of {@code tool}; empty for a tool that marks none or is unknown. */
  List<Param> params(String tool) {
    return byTool.getOrDefault(tool, List.of());
  }

  private static void visit(String tool, JsonObject schema, List<String> path, boolean reachable, List<Param> out) {
    Object mark = schema.getValue(ANNOTATION);
    if (mark != null) {
      String where = path.isEmpty() ? "the schema root" : String.join(".", path);
      if (!reachable || path.isEmpty()) {
        throw new IllegalArgumentException(tool + ": " + ANNOTATION + " at " + where + " is not reachable from the root through"
            + " properties alone");
      }
      if (!(mark instanceof String name) || !TOKEN.matcher(name).matches()) {
        throw new IllegalArgumentException(tool + ": " + ANNOTATION + " of " + where + " must be a non-empty HTTP token");
      }
      if (!(schema.getValue("type") instanceof String type) || !TYPES.contains(type)) {
        throw new IllegalArgumentException(tool + ": " + where + " is marked " + ANNOTATION + " but its type is not string,"
            + " integer or boolean");
      }
      out.add(new Param(path, name));
    }
    for (Map.Entry<String, Object> e : schema) {
      if (DATA_KEYWORDS.contains(e.getKey())) {
        continue;
      }
      if ("properties".equals(e.getKey()) && e.getValue() instanceof JsonObject properties) {
        for (Map.Entry<String, Object> p : properties) {
          if (p.getValue() instanceof JsonObject sub) {
            List<String> deeper = new ArrayList<>(path);
            deeper.add(p.getKey());
            visit(tool, sub, List.copyOf(deeper), reachable, out);
          }
        }
      } else {
        visitNested(tool, e.getValue(), path, out);
      }
    }
  }

  /** Anything under a keyword other than {@code properties} is not statically reachable. */
  private static void visitNested(String tool, Object value, List<String> path, List<Param> out) {
    if (value instanceof JsonObject o) {
      visit(tool, o, path, false, out);
    } else if (value instanceof JsonArray a) {
      a.forEach(item -> visitNested(tool, item, path, out));
    }
  }

  /**
   * Why the {@code Mcp-Param-*} headers of a {@code tools/call} do not fit its arguments, as a
   * message that says what to send; null when they fit. Values are never repeated.
   */
  public String mismatch(String tool, JsonObject arguments, MultiMap headers) {
    for (Param p : params(tool)) {
      List<String> sent = headers.getAll(p.header());
      if (sent.size() > 1) {
        return "Header mismatch: send at most one " + p.header() + " header; this request has " + sent.size() + ".";
      }
      Object value = valueAt(arguments, p.path());
      if (value == null) {
        if (!sent.isEmpty()) {
          return "Header mismatch: " + p.header() + " was sent but " + p.pointer() + " has no value; send the header only"
              + " when the argument is there.";
        }
        continue;
      }
      if (sent.isEmpty()) {
        return "Header mismatch: " + p.header() + " is missing; " + tool + " mirrors " + p.pointer() + " into it (its"
            + " inputSchema marks it " + ANNOTATION + "), so send the header with the argument's value.";
      }
      String raw = trimOws(sent.get(0));
      if (!plainHeaderValue(raw)) {
        return "Header mismatch: " + p.header() + " holds characters a header value may not; send a value that is not"
            + " plain ASCII as " + McpHeaders.B64_PREFIX + "<base64 of its UTF-8 bytes>" + McpHeaders.B64_SUFFIX + ".";
      }
      String decoded = McpHeaders.decodeValue(raw);
      if (decoded == null) {
        return "Header mismatch: " + p.header() + " is not valid base64 of UTF-8 text between " + McpHeaders.B64_PREFIX + " and "
            + McpHeaders.B64_SUFFIX + "; encode the argument's value with padding, or send it as it is.";
      }
      if (!matches(decoded, value)) {
        return "Header mismatch: " + p.header() + " does not equal " + p.pointer() + "; send the argument's value (strings"
            + " as they are, integers in decimal, booleans as true or false).";
      }
    }
    return null;
  }

  private static Object valueAt(JsonObject arguments, List<String> path) {
    Object current = arguments;
    for (String key : path) {
      if (!(current instanceof JsonObject o)) {
        return null;
      }
      current = o.getValue(key);
    }
    return current;
  }

  /**
   * Whether a header's text stands for a body value, by the value's JSON type: strings as they
   * are, booleans as {@code true}/{@code false}, integers compared as numbers (so {@code 42.0}
   * stands for 42). A value of another type cannot be mirrored; the argument check refuses it.
   */
  static boolean matches(String header, Object value) {
    if (value instanceof String s) {
      return s.equals(header);
    }
    if (value instanceof Boolean b) {
      return b.toString().equals(header);
    }
    if (value instanceof Number n && !(n instanceof Double || n instanceof Float)) {
      try {
        return new BigDecimal(header).compareTo(new BigDecimal(n.toString())) == 0;
      } catch (NumberFormatException e) {
        return false;
      }
    }
    if (value instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) && Math.abs(n.doubleValue()) <= MAX_SAFE_INTEGER) {
      try {
        return new BigDecimal(header).compareTo(BigDecimal.valueOf(n.doubleValue())) == 0;
      } catch (NumberFormatException e) {
        return false;
      }
    }
    return true;
  }

  /** RFC 9110 field values: visible ASCII, space and tab. */
  private static boolean plainHeaderValue(String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c != '\t' && (c < 0x20 || c > 0x7E)) {
        return false;
      }
    }
    return true;
  }

  private static String trimOws(String value) {
    int start = 0;
    int end = value.length();
    while (start < end && (value.charAt(start) == ' ' || value.charAt(start) == '\t')) {
      start++;
    }
    while (end > start && (value.charAt(end - 1) == ' ' || value.charAt(end - 1) == '\t')) {
      end--;
    }
    return value.substring(start, end);
  }


}
