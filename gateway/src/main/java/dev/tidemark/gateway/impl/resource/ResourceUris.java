package dev.tidemark.gateway.impl.resource;

import io.vertx.core.json.JsonArray;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Tidemark's resource URIs. A row key is written one way, reversibly: the primary-key values in
 * key-column order, each percent-encoded (RFC 3986; only unreserved characters stay as they are),
 * joined by commas: {@code tidemark://row/order_items/17,2}. A table is its name, or
 * {@code schema.name} outside the first served schema.
 */
public final class ResourceUris {

  public static final String SCHEMA = "tidemark://schema";
  public static final String CHANGES = "tidemark://changes";
  public static final String TABLE_PREFIX = "tidemark://table/";
  public static final String ROW_PREFIX = "tidemark://row/";
  public static final String DOCS_PREFIX = "tidemark://docs/";

  private ResourceUris() {}

  /** A parsed {@code tidemark://table/...} or {@code tidemark://row/...} URI. */
  public record Parsed(String kind, String table, List<String> key) {}

  /** Null when {@code uri} is not a table or row URI. */
  public static Parsed parse(String uri) {
    if (uri.startsWith(TABLE_PREFIX)) {
      String table = decode(uri.substring(TABLE_PREFIX.length()));
      return table == null || table.isEmpty() || table.contains("/") ? null : new Parsed("table", table, List.of());
    }
    if (uri.startsWith(ROW_PREFIX)) {
      String rest = uri.substring(ROW_PREFIX.length());
      int slash = rest.indexOf('/');
      if (slash <= 0 || slash == rest.length() - 1) {
        return null;
      }
      String table = decode(rest.substring(0, slash));
      List<String> key = new ArrayList<>();
      for (String part : rest.substring(slash + 1).split(",", -1)) {
        String value = decode(part);
        if (value == null) {
          return null;
        }
        key.add(value);
      }
      return table == null || table.isEmpty() ? null : new Parsed("row", table, key);
    }
    return null;
  }

  public static String table(String qualifiedTable) {
    return TABLE_PREFIX + encode(qualifiedTable);
  }

  public static String row(String qualifiedTable, List<String> key) {
    StringBuilder sb = new StringBuilder(ROW_PREFIX).append(encode(qualifiedTable)).append('/');
    for (int i = 0; i < key.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(encode(key.get(i)));
    }
    return sb.toString();
  }

  /** The key of a change notice (a JSON array of values) as strings; null for a key it cannot name. */
  public static List<String> keyOf(Object key) {
    if (!(key instanceof JsonArray values)) {
      return null;
    }
    List<String> out = new ArrayList<>();
    for (Object v : values) {
      if (v == null || v instanceof JsonArray || v instanceof io.vertx.core.json.JsonObject) {
        return null;
      }
      out.add(String.valueOf(v));
    }
    return out;
  }

  /** Percent-encodes everything but RFC 3986's unreserved characters, so commas and slashes stay separators. */
  static String encode(String value) {
    StringBuilder sb = new StringBuilder();
    for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~') {
        sb.append(c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
            .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
      }
    }
    return sb.toString();
  }

  /** Null for bad escapes, and for a NUL (%00): PostgreSQL holds no name or value with one, so no resource has it. */
  private static String decode(String value) {
    try {
      String decoded = URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
      return decoded.indexOf('\u0000') >= 0 ? null : decoded;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }
}
