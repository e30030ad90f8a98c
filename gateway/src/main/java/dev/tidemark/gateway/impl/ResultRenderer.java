package dev.tidemark.gateway.impl;

import dev.tidemark.contract.ToolReply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Builds an MCP {@code CallToolResult} from a service's reply. The text content opens with one
 * line that says how the call ended; rows follow, one JSON object a line, fenced between
 * {@code BEGIN-<nonce>} and {@code END-<nonce>} so that text people or agents wrote cannot pass
 * itself off as Tidemark's words. The nonce is random and occurs nowhere else in the response.
 */
public final class ResultRenderer {

  private static final SecureRandom RANDOM = new SecureRandom();

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
    if (rows != null && !rows.isEmpty()) {
      StringBuilder body = new StringBuilder();
      for (Object row : rows) {
        body.append(io.vertx.core.json.Json.encode(row)).append('\n');
      }
      String nonce = nonceAbsentFrom(text + "\n" + body);
      text.append('\n').append("BEGIN-").append(nonce).append('\n').append(body).append("END-").append(nonce);
    }
    return new JsonObject()
        .put("content", new JsonArray().add(textBlock(text.toString())))
        .put("structuredContent", reply.structured());
  }

  static String nonceAbsentFrom(String content) {
    while (true) {
      byte[] bytes = new byte[12];
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
