package dev.tidemark.gateway.impl.service;

import dev.tidemark.gateway.impl.service.ResultRenderer;
import dev.tidemark.contract.ToolReply;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Builds an MCP {@code CallToolResult} from a service's reply. The text content opens with one
 * line that says how the call ended; rows follow fenced between {@code BEGIN-<nonce>} and
 * {@code END-<nonce>}, so that text people or agents wrote cannot pass itself off as Tidemark's
 * words. The nonce is random and occurs nowhere else in the response. Inside the fence the first
 * line is a JSON array of the column names and each further line a JSON array of one row's
 * values: the names are paid for once, not once per row, and JSON escapes keep a value on its line.
 * A result of several kinds of rows (a table's columns and its foreign keys) passes them as blocks,
 * arrays of rows: each block has its own names line, an empty line comes between two, and one fence
 * holds them all.
 */
public final class ResultRenderer {

  private static final SecureRandom RANDOM = new SecureRandom();
  /**
   * Random bytes of a nonce. A nonce never occurs in the response it fences, so no value can close
   * the fence whatever it holds; being random, it also cannot be known before the response exists.
   */
  private static final int NONCE_BYTES = 4;

  private ResultRenderer() {}

  public static JsonObject render(String tool, ToolReply reply) {
    if (reply.isError()) {
      JsonObject error = reply.error();
      String text = tool + " failed: " + error.getString("code") + ": " + error.getString("message");
      return new JsonObject()
          .put("content", new JsonArray().add(textBlock(text)))
          .put("structuredContent", new JsonObject().put("error", error))
          .put("isError", true);
    }
    StringBuilder text = new StringBuilder(reply.summary());
    JsonArray rows = reply.rows();
    String body = rows == null ? "" : body(rows);
    if (!body.isEmpty()) {
      String nonce = nonceAbsentFrom(text + "\n" + body);
      text.append('\n').append("BEGIN-").append(nonce).append('\n').append(body).append("END-").append(nonce);
    }
    return new JsonObject()
        .put("content", new JsonArray().add(textBlock(text.toString())))
        .put("structuredContent", reply.structured());
  }

  /** The rows as one table, or when every element is an array of rows, each non-empty one as a table of its own. */
  static String body(JsonArray rows) {
    if (rows.isEmpty() || !rows.stream().allMatch(JsonArray.class::isInstance)) {
      return rows.isEmpty() ? "" : table(rows);
    }
    StringBuilder body = new StringBuilder();
    for (Object block : rows) {
      if (!((JsonArray) block).isEmpty()) {
        body.append(body.isEmpty() ? "" : "\n").append(table((JsonArray) block));
      }
    }
    return body.toString();
  }

  /** The rows as a header line of names and one line of values per row; a name a row lacks is null there. */
  static String table(JsonArray rows) {
    Set<String> names = new LinkedHashSet<>();
    for (Object row : rows) {
      if (row instanceof JsonObject o) {
        names.addAll(o.fieldNames());
      }
    }
    List<String> header = new ArrayList<>(names);
    StringBuilder body = new StringBuilder(Json.encode(header)).append('\n');
    for (Object row : rows) {
      JsonArray values = new JsonArray();
      if (row instanceof JsonObject o) {
        header.forEach(n -> values.add(o.getValue(n)));
      } else {
        values.add(row);
      }
      body.append(values.encode()).append('\n');
    }
    return body.toString();
  }

  static String nonceAbsentFrom(String content) {
    while (true) {
      byte[] bytes = new byte[NONCE_BYTES];
      RANDOM.nextBytes(bytes);
      String nonce = HexFormat.of().formatHex(bytes);
      if (!content.contains(nonce)) {
        return nonce;
      }
    }
  }

  private static JsonObject textBlock(String text) {
    return new JsonObject().put("type", "text").put("text", text);
  }
}
