package dev.tidemark.testsupport;

import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A plain HTTP client for MCP endpoints in tests: it speaks the wire protocol itself, so tests see
 * exactly the statuses, headers and bodies a real client gets. Calls block the test thread.
 */
public final class McpHttpClient implements AutoCloseable {

  public static final String PROTOCOL_VERSION = "2025-11-25";

  private final Vertx vertx;
  private final WebClient client;
  private final AtomicLong ids = new AtomicLong();
  private String baseUrl;
  private String token;
  private String sessionId;

  public McpHttpClient(String baseUrl, String token) {
    this.vertx = Vertx.vertx();
    this.client = WebClient.create(vertx, new WebClientOptions().setKeepAlive(true));
    this.baseUrl = baseUrl;
    this.token = token;
  }

  /** Points later requests at another gateway; the session id goes along. */
  public McpHttpClient at(String baseUrl) {
    this.baseUrl = baseUrl;
    return this;
  }

  public String sessionId() {
    return sessionId;
  }

  public McpHttpClient withToken(String token) {
    this.token = token;
    return this;
  }

  /** initialize + notifications/initialized; returns the initialize result. */
  public JsonObject initialize() {
    return initialize(new JsonObject());
  }

  /** As {@link #initialize()}, declaring the given client capabilities (elicitation, sampling). */
  public JsonObject initialize(JsonObject capabilities) {
    Reply init = post(request("initialize", new JsonObject()
        .put("protocolVersion", PROTOCOL_VERSION)
        .put("capabilities", capabilities)
        .put("clientInfo", new JsonObject().put("name", "tidemark-tests").put("version", "1"))));
    if (init.status() != 200) {
      throw new AssertionError("initialize answered " + init.status() + ": " + init.body());
    }
    sessionId = init.headers().get("Mcp-Session-Id");
    Reply initialized = post(new JsonObject().put("jsonrpc", "2.0").put("method", "notifications/initialized"));
    if (initialized.status() != 202) {
      throw new AssertionError("notifications/initialized answered " + initialized.status());
    }
    return init.json().getJsonObject("result");
  }

  /** A JSON-RPC request; returns the whole response message. */
  public JsonObject rpc(String method, JsonObject params) {
    Reply reply = post(request(method, params));
    if (reply.status() != 200) {
      throw new AssertionError(method + " answered HTTP " + reply.status() + ": " + reply.body());
    }
    return reply.json();
  }

  /** tools/call; returns the CallToolResult. */
  public JsonObject callTool(String name, JsonObject arguments) {
    JsonObject response = rpc("tools/call", new JsonObject().put("name", name).put("arguments", arguments));
    if (response.containsKey("error")) {
      throw new AssertionError("tools/call " + name + " failed: " + response.encode());
    }
    return response.getJsonObject("result");
  }

  public JsonObject request(String method, JsonObject params) {
    JsonObject msg = new JsonObject().put("jsonrpc", "2.0").put("id", ids.incrementAndGet()).put("method", method);
    return params == null ? msg : msg.put("params", params);
  }

  public Reply post(JsonObject message) {
    return post(message.toBuffer(), MultiMap.caseInsensitiveMultiMap());
  }

  /** A POST with the usual headers (token, session, version, content type) plus {@code extra}, which win. */
  public Reply post(Buffer body, MultiMap extra) {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap()
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream");
    if (token != null) {
      headers.add("Authorization", "Bearer " + token);
    }
    if (sessionId != null) {
      headers.add("Mcp-Session-Id", sessionId);
      headers.add("MCP-Protocol-Version", PROTOCOL_VERSION);
    }
    for (String name : extra.names()) {
      headers.remove(name);
      for (String value : extra.getAll(name)) {
        if (value != null) {
          headers.add(name, value);
        }
      }
    }
    return send("POST", body, headers);
  }

  public Reply delete() {
    MultiMap headers = MultiMap.caseInsensitiveMultiMap();
    if (token != null) {
      headers.add("Authorization", "Bearer " + token);
    }
    if (sessionId != null) {
      headers.add("Mcp-Session-Id", sessionId);
    }
    return send("DELETE", null, headers);
  }

  public Reply send(String method, Buffer body, MultiMap headers) {
    var req = client.requestAbs(io.vertx.core.http.HttpMethod.valueOf(method), baseUrl).putHeaders(headers);
    var future = body == null ? req.send() : req.sendBuffer(body);
    HttpResponse<Buffer> response = future.toCompletionStage().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS).join();
    return new Reply(response.statusCode(), response.headers(), response.bodyAsString());
  }

  @Override
  public void close() {
    client.close();
    vertx.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
  }

  /** One HTTP answer; an SSE answer is read as its events. */
  public record Reply(int status, MultiMap headers, String body) {

    public boolean isStream() {
      String type = headers.get("Content-Type");
      return type != null && type.startsWith("text/event-stream");
    }

    /** The JSON-RPC response: the body, or on a stream the event that carries the response. */
    public JsonObject json() {
      if (!isStream()) {
        return new JsonObject(body);
      }
      return events().stream().map(SseEvent::data).filter(d -> d != null && (d.containsKey("result") || d.containsKey("error")))
          .reduce((a, b) -> b).orElseThrow(() -> new AssertionError("the stream carried no response: " + body));
    }

    /** Every SSE event of a stream answer, in order. */
    public java.util.List<SseEvent> events() {
      return SseEvent.parse(body);
    }
  }

  /** One server-sent event: its id (or null) and its data as JSON (null when empty). */
  public record SseEvent(String id, JsonObject data) {

    /**
     * The events of a stream's text. As an event source does, it dispatches an event only at the
     * blank line that ends it: the last block of a stream read for a while and then cut is dropped
     * when it has not ended.
     */
    public static java.util.List<SseEvent> parse(String text) {
      java.util.List<SseEvent> out = new java.util.ArrayList<>();
      String normal = text.replace("\r\n", "\n");
      String[] blocks = normal.split("\n\n");
      int complete = normal.endsWith("\n\n") ? blocks.length : blocks.length - 1;
      for (String block : java.util.Arrays.copyOf(blocks, Math.max(0, complete))) {
        String id = null;
        StringBuilder data = new StringBuilder();
        boolean any = false;
        for (String line : block.split("\n")) {
          if (line.startsWith("id:")) {
            id = line.substring(3).trim();
            any = true;
          } else if (line.startsWith("data:")) {
            data.append(line.substring(5).trim());
            any = true;
          }
        }
        if (any) {
          out.add(new SseEvent(id, data.length() == 0 ? null : new JsonObject(data.toString())));
        }
      }
      return out;
    }
  }
}
