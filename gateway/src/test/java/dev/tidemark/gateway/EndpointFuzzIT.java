package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.RawHttp;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fuzzes the MCP endpoint of one real node (every role, real PostgreSQL and Kafka) with thousands of
 * generated requests: broken and truncated JSON, wrong types at every level of a JSON-RPC message,
 * huge strings, deep nesting, unknown fields, wrong and missing headers of both eras, batches,
 * binary garbage, over-size and stalled bodies, other HTTP methods. Every answer must be a
 * documented status, never a 5xx and never a hang; a JSON body must be a JSON-RPC result or error;
 * an error never repeats a value planted in the request; the node keeps answering {@code ping}; and
 * the heap does not grow by more than 64 MiB. The seed is printed; rerun one with -Dfuzz.seed=N.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndpointFuzzIT {

  private static final int REQUESTS = Integer.getInteger("fuzz.requests", 3_000);
  private static final int THREADS = 4;
  private static final int PING_EVERY = 500;
  private static final long PER_REQUEST_TIMEOUT_MS = 10_000;
  private static final int MAX_BODY = 262_144;
  private static final int BODY_TIMEOUT_MS = 1_000;
  private static final long HEAP_GROWTH_LIMIT = 64L * 1024 * 1024;
  private static final Set<Integer> DOCUMENTED = Set.of(200, 202, 400, 401, 403, 404, 405, 406, 408, 413, 415);
  private static final String MODERN = "2026-07-28";
  private static final String META_VERSION = "io.modelcontextprotocol/protocolVersion";

  private NodeHarness node;
  private String sessionId;
  private String marker;

  @BeforeAll
  void start(SharedInfra infra) {
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command,changelog", Map.of(
        ConfigKey.HTTP_MAX_BODY_BYTES, String.valueOf(MAX_BODY),
        ConfigKey.HTTP_BODY_TIMEOUT_MS, String.valueOf(BODY_TIMEOUT_MS)));
    try (McpHttpClient c = new McpHttpClient(node.mcpUrl(), NodeHarness.READ_WRITE_TOKEN)) {
      c.initialize();
      sessionId = c.sessionId();
    }
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(node);
  }

  // ---- the run ----

  @Test
  void everyGeneratedRequestGetsADocumentedAnswerAndTheNodeKeepsServing() throws Exception {
    long seed = Long.getLong("fuzz.seed", System.nanoTime());
    System.out.println("EndpointFuzzIT seed: " + seed + " (rerun with -Dfuzz.seed=" + seed + ")");
    Random seeds = new Random(seed);
    marker = "ECHO-MARKER-" + Long.toHexString(seeds.nextLong() & 0xffffffffffffL);

    ping("before the run");
    long heapBefore = heapAfterGc();
    Map<String, AtomicInteger> byStatus = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> byKind = new ConcurrentHashMap<>();
    List<String> failures = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    long started = System.nanoTime();
    int sent = 0;
    int reported = 0;
    try {
      while (sent < REQUESTS) {
        int batch = Math.min(PING_EVERY, REQUESTS - sent);
        List<java.util.concurrent.Future<?>> pending = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
          // each request has its own generator, seeded from the run's seed, so that any one can be replayed
          long requestSeed = seeds.nextLong();
          int number = sent + i;
          pending.add(pool.submit(() -> {
            FuzzRequest request = generate(new Random(requestSeed));
            byKind.computeIfAbsent(request.kind, k -> new AtomicInteger()).incrementAndGet();
            String failure;
            try {
              Answer answer = send(request);
              byStatus.computeIfAbsent(String.valueOf(answer.status), k -> new AtomicInteger()).incrementAndGet();
              failure = check(request, answer);
            } catch (RawHttp.Refused refused) {
              // a body over the cap may be cut off by the server's 413 and close before it is all written
              boolean oversize = request.body != null && request.body.length() > MAX_BODY;
              byStatus.computeIfAbsent(oversize ? "closed-early" : "failed", k -> new AtomicInteger()).incrementAndGet();
              failure = oversize ? null : "request failed: " + refused;
            } catch (Throwable t) {
              byStatus.computeIfAbsent(t instanceof TimeoutException ? "hang" : "failed", k -> new AtomicInteger()).incrementAndGet();
              failure = (t instanceof TimeoutException ? "no answer within " + PER_REQUEST_TIMEOUT_MS + " ms" : "request failed: " + t);
            }
            if (failure != null) {
              failures.add("#" + number + " (seed " + requestSeed + ", " + request.describe() + "): " + failure);
            }
          }));
        }
        for (var f : pending) {
          f.get(5, TimeUnit.MINUTES);
        }
        sent += batch;
        try {
          ping("after " + sent + " requests");
        } catch (Throwable t) {
          failures.add("ping after " + sent + " requests: " + t);
        }
        failures.stream().skip(reported).forEach(f -> System.out.println("EndpointFuzzIT failure: " + f));
        reported = failures.size();
      }
    } finally {
      pool.shutdownNow();
    }
    double elapsed = (System.nanoTime() - started) / 1e9;
    ping("at the end");
    long heapAfter = heapAfterGc();

    System.out.println("EndpointFuzzIT figures: seed=" + seed + " requests=" + sent + " elapsed=" + String.format("%.1f", elapsed) + " s"
        + " statuses=" + new TreeMap<>(byStatus) + " kinds=" + new TreeMap<>(byKind)
        + " heapBefore=" + mib(heapBefore) + " heapAfter=" + mib(heapAfter) + " growth=" + mib(heapAfter - heapBefore));
    assertTrue(failures.isEmpty(), failures.size() + " of " + sent + " requests failed; first: " + failures.stream().limit(10).toList());
    assertTrue(heapAfter - heapBefore < HEAP_GROWTH_LIMIT, "heap grew by " + mib(heapAfter - heapBefore));
  }

  /** The requests that once got a 5xx, a hang or a malformed answer, sent on purpose so that they stay fixed. */
  @Test
  void theFaultsTheFuzzFoundStayFixed() throws Exception {
    // a Content-Type of only ";" has an empty media type: 415, not 500
    MultiMap semicolon = legacyHeaders();
    semicolon.set("Content-Type", ";");
    Answer type = send(new FuzzRequest("fixed", HttpMethod.POST, "/mcp", semicolon,
        Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"), false, null));
    assertEquals(415, type.status, type.body);

    // "_meta": null on a session request is no _meta: answered, not left hanging
    Answer nullMeta = send(new FuzzRequest("fixed", HttpMethod.POST, "/mcp", legacyHeaders(),
        Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"_meta\":null}}"), false, null));
    assertEquals(200, nullMeta.status, nullMeta.body);
    assertEquals(new JsonObject(), new JsonObject(nullMeta.body).getJsonObject("result"));

    // a listen request refused before its stream opened is one JSON error, not a stream that never ends
    JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", 3).put("method", "subscriptions/listen")
        .put("params", new JsonObject().put("_meta", new JsonObject().put(META_VERSION, MODERN)
            .put("io.modelcontextprotocol/clientCapabilities", new JsonObject())).put("notifications", "x"));
    Answer refused = send(new FuzzRequest("fixed", HttpMethod.POST, "/mcp", modernHeaders("subscriptions/listen", null),
        listen.toBuffer(), false, null));
    assertEquals(200, refused.status, refused.body);
    assertTrue(refused.headers.get("Content-Type").startsWith("application/json"), refused.headers.get("Content-Type"));
    assertEquals(-32602, new JsonObject(refused.body).getJsonObject("error").getInteger("code"));

    // a priming event is never replayed as a message, even when a client reuses a request id (the
    // progress token makes the answer a stream, which opens with a priming event)
    String call = "{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"tools/call\",\"params\":{\"name\":\"no_such_tool\","
        + "\"_meta\":{\"progressToken\":\"p-77\"}}}";
    Answer first = send(new FuzzRequest("fixed", HttpMethod.POST, "/mcp", legacyHeaders(), Buffer.buffer(call), false, null));
    send(new FuzzRequest("fixed", HttpMethod.POST, "/mcp", legacyHeaders(), Buffer.buffer(call), false, null));
    String primingId = McpHttpClient.SseEvent.parse(first.body).get(0).id();
    MultiMap resume = legacyHeaders();
    resume.set("Accept", "text/event-stream").set("Last-Event-ID", primingId);
    Answer replay = send(new FuzzRequest("fixed", HttpMethod.GET, "/mcp", resume, null, false, null));
    assertEquals(200, replay.status, replay.body);
    List<McpHttpClient.SseEvent> replayed = McpHttpClient.SseEvent.parse(replay.body);
    assertTrue(!replayed.isEmpty(), replay.body);
    for (McpHttpClient.SseEvent e : replayed) {
      assertEquals("2.0", e.data() == null ? null : e.data().getString("jsonrpc"), "replayed: " + replay.body);
    }
  }

  private static String mib(long bytes) {
    return String.format("%.1f MiB", bytes / 1024.0 / 1024.0);
  }

  /** G1 runs an explicit collection as a full, stop-the-world one: once it returns, the heap is collected. */
  private static long heapAfterGc() {
    var memory = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      memory.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }

  private void ping(String when) throws Exception {
    MultiMap headers = legacyHeaders();
    Answer answer = send(new FuzzRequest("ping", HttpMethod.POST, "/mcp", headers,
        Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":\"ping\",\"method\":\"ping\"}"), false, null));
    assertEquals(200, answer.status, "ping " + when + ": " + answer.body);
    JsonObject reply = new JsonObject(answer.body);
    assertEquals(new JsonObject(), reply.getJsonObject("result"), "ping " + when + ": " + answer.body);
    assertEquals("ping", reply.getValue("id"));
  }

  // ---- checking an answer ----

  private String check(FuzzRequest request, Answer answer) {
    if (!DOCUMENTED.contains(answer.status)) {
      return "status " + answer.status + " is not documented; body: " + abbreviate(answer.body);
    }
    String type = answer.headers.get("Content-Type");
    if (type != null && type.startsWith("text/event-stream")) {
      if (answer.status != 200) {
        return "an event stream with status " + answer.status;
      }
      for (McpHttpClient.SseEvent event : McpHttpClient.SseEvent.parse(answer.body)) {
        if (event.data() == null) {
          continue;
        }
        String problem = checkMessage(event.data(), true);
        if (problem != null) {
          return problem + " in event " + abbreviate(event.data().encode());
        }
      }
      return null;
    }
    if (answer.body.isEmpty()) {
      return answer.status == 200 || answer.status == 202 || answer.status == 405 || request.method == HttpMethod.HEAD
          ? null : "status " + answer.status + " without a body";
    }
    if (answer.status == 202) {
      return "202 with a body: " + abbreviate(answer.body);
    }
    if (type == null || !type.startsWith("application/json")) {
      return "a body of type " + type + ": " + abbreviate(answer.body);
    }
    JsonObject message;
    try {
      message = new JsonObject(answer.body);
    } catch (RuntimeException e) {
      return "a body that is not a JSON object: " + abbreviate(answer.body);
    }
    String problem = checkMessage(message, false);
    if (problem != null) {
      return problem + ": " + abbreviate(answer.body);
    }
    if (answer.status >= 400 && !message.containsKey("error")) {
      return "status " + answer.status + " with a result";
    }
    return null;
  }

  /** A JSON-RPC response (or, on a stream, a notification or server request) as the contract has it. */
  private String checkMessage(JsonObject message, boolean onStream) {
    if (!"2.0".equals(message.getValue("jsonrpc"))) {
      return "no \"jsonrpc\": \"2.0\"";
    }
    boolean result = message.containsKey("result");
    boolean error = message.containsKey("error");
    if (onStream && !result && !error) {
      return message.getValue("method") instanceof String ? null : "a stream event that is neither a message nor a response";
    }
    if (result == error) {
      return "a response needs exactly one of result and error";
    }
    if (!message.containsKey("id")) {
      return "a response without id";
    }
    if (error) {
      if (!(message.getValue("error") instanceof JsonObject e) || !(e.getValue("code") instanceof Integer)
          || !(e.getValue("message") instanceof String)) {
        return "an error without an integer code and a message";
      }
      if (echoes(e)) {
        return "the error repeats a value sent";
      }
      return null;
    }
    if (!(message.getValue("result") instanceof JsonObject r)) {
      return "a result that is not an object";
    }
    // arguments that do not fit the schema are refused without repeating them (the faults name places, not values)
    if (Boolean.TRUE.equals(r.getValue("isError")) && r.getValue("structuredContent") instanceof JsonObject sc
        && sc.getValue("error") instanceof JsonObject e && e.containsKey("faults") && r.encode().contains(marker)) {
      return "an INVALID_ARGUMENTS tool error repeats a value sent";
    }
    return null;
  }

  /**
   * Whether a JSON-RPC error repeats the planted marker. The two echoes the MCP revisions prescribe
   * are allowed: the {@code uri} of resource-not-found (-32002, or -32602 on 2026-07-28) and the
   * {@code requested} version of -32022.
   */
  private boolean echoes(JsonObject error) {
    JsonObject e = error.copy();
    if (e.getValue("data") instanceof JsonObject data) {
      int code = e.getInteger("code");
      if (code == -32002 || code == -32602) {
        data.remove("uri");
      }
      if (code == -32022) {
        data.remove("requested");
      }
    }
    return e.encode().contains(marker);
  }

  private static String abbreviate(String s) {
    return s.length() <= 400 ? s : s.substring(0, 400) + "...(" + s.length() + " chars)";
  }

  // ---- sending ----

  private record Answer(int status, MultiMap headers, String body) {}

  private static final class FuzzRequest {
    final String kind;
    final HttpMethod method;
    final String path;
    final MultiMap headers;
    final Buffer body;
    final boolean chunked;
    /** Sent as the start of a body whose declared length never arrives (the body deadline); null otherwise. */
    final Buffer stalled;

    FuzzRequest(String kind, HttpMethod method, String path, MultiMap headers, Buffer body, boolean chunked, Buffer stalled) {
      this.kind = kind;
      this.method = method;
      this.path = path;
      this.headers = headers;
      this.body = body;
      this.chunked = chunked;
      this.stalled = stalled;
    }

    String describe() {
      StringBuilder sb = new StringBuilder(kind).append(' ').append(method).append(' ').append(path).append(" headers=");
      headers.forEach(h -> sb.append(h.getKey()).append(": ").append(abbreviate(h.getValue())).append("; "));
      if (body != null) {
        sb.append(" body=").append(abbreviate(new String(body.getBytes(), StandardCharsets.ISO_8859_1)));
      }
      return sb.toString();
    }
  }

  /** Sends one request on its own connection and reads its answer; an event stream is read for a short while. */
  private Answer send(FuzzRequest r) throws Exception {
    List<String[]> headers = new ArrayList<>();
    r.headers.forEach(h -> headers.add(new String[] {h.getKey(), h.getValue()}));
    byte[] body = r.stalled != null ? r.stalled.getBytes() : r.body == null ? null : r.body.getBytes();
    int stallAfter = r.stalled != null ? r.stalled.length() : -1;
    RawHttp.Response response = RawHttp.exchange(node.port(), r.method.name(), r.path, headers, body, r.chunked, stallAfter,
        PER_REQUEST_TIMEOUT_MS);
    MultiMap answerHeaders = MultiMap.caseInsensitiveMultiMap();
    response.headers().forEach(h -> answerHeaders.add(h[0], h[1]));
    return new Answer(response.status(), answerHeaders, response.bodyText());
  }

  // ---- generating ----

  private static final List<String> METHODS = List.of("ping", "tools/list", "tools/call", "tools/call", "tools/call", "resources/list",
      "resources/templates/list", "resources/read", "resources/read", "resources/subscribe", "resources/unsubscribe", "prompts/list",
      "prompts/get", "completion/complete", "logging/setLevel", "initialize", "server/discover", "subscriptions/listen",
      "notifications/initialized", "notifications/cancelled", "notifications/progress", "tables/drop", "", "TOOLS/LIST");
  private static final List<String> TOOLS = List.of("status", "list_tables", "describe_table", "get_row", "list_rows", "query",
      "explain", "changes_since", "drop_everything", "");
  private static final List<String> VERSIONS = List.of("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", MODERN, "2099-01-01",
      "", "garbage", "2025-11-25 ", "2026-07-28x", "2026-07-28,2025-11-25");

  private MultiMap legacyHeaders() {
    return MultiMap.caseInsensitiveMultiMap()
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
        .add("Mcp-Session-Id", sessionId)
        .add("MCP-Protocol-Version", "2025-11-25");
  }

  private MultiMap modernHeaders(String method, String name) {
    MultiMap h = MultiMap.caseInsensitiveMultiMap()
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN)
        .add("MCP-Protocol-Version", MODERN)
        .add("Mcp-Method", method);
    if (name != null) {
      h.add("Mcp-Name", name);
    }
    return h;
  }

  FuzzRequest generate(Random rnd) {
    int pick = rnd.nextInt(100);
    if (pick < 40) {
      return legacyMessage(rnd);
    }
    if (pick < 60) {
      return modernMessage(rnd);
    }
    if (pick < 75) {
      return rawBody(rnd);
    }
    if (pick < 90) {
      return headerFuzz(rnd);
    }
    return otherMethod(rnd);
  }

  /** A well-formed request of the session's era, then broken at one or more levels. */
  private FuzzRequest legacyMessage(Random rnd) {
    JsonObject msg = baseMessage(rnd, METHODS.get(rnd.nextInt(METHODS.size())), false);
    int mutations = rnd.nextInt(4);
    for (int i = 0; i < mutations; i++) {
      mutate(rnd, msg);
    }
    MultiMap headers = legacyHeaders();
    if (rnd.nextInt(4) == 0) {
      headers.set("Accept", "application/json");
    }
    return new FuzzRequest("legacy", HttpMethod.POST, path(rnd), headers, encode(rnd, msg), rnd.nextInt(20) == 0, null);
  }

  /** A 2026-07-28 request: version in _meta and header, Mcp-Method and Mcp-Name, each sometimes wrong. */
  private FuzzRequest modernMessage(Random rnd) {
    String method = METHODS.get(rnd.nextInt(METHODS.size()));
    JsonObject msg = baseMessage(rnd, method, true);
    JsonObject params = msg.getJsonObject("params");
    String name = params.getValue("name") instanceof String s ? s : params.getValue("uri") instanceof String u ? u : null;
    String nameHeader = name == null ? null : rnd.nextInt(3) == 0
        ? "=?base64?" + Base64.getEncoder().encodeToString(name.getBytes(StandardCharsets.UTF_8)) + "?=" : name;
    MultiMap headers = modernHeaders(method, nameHeader);
    switch (rnd.nextInt(12)) {
      case 0 -> headers.remove("Mcp-Method");
      case 1 -> headers.set("Mcp-Method", pickString(rnd));
      case 2 -> headers.remove("Mcp-Name");
      case 3 -> headers.set("Mcp-Name", rnd.nextBoolean() ? "=?base64?" + pickString(rnd) + "?=" : "=?base64?%%%?=");
      case 4 -> headers.set("MCP-Protocol-Version", VERSIONS.get(rnd.nextInt(VERSIONS.size())));
      case 5 -> headers.remove("MCP-Protocol-Version");
      case 6 -> {
        String v = rnd.nextBoolean() ? marker : VERSIONS.get(rnd.nextInt(VERSIONS.size()));
        params.getJsonObject("_meta").put(META_VERSION, v);
        headers.set("MCP-Protocol-Version", v);
      }
      case 7 -> headers.add("Mcp-Session-Id", rnd.nextBoolean() ? sessionId : marker);
      default -> { }
    }
    int mutations = rnd.nextInt(3);
    for (int i = 0; i < mutations; i++) {
      mutate(rnd, msg);
    }
    if (rnd.nextInt(3) == 0) {
      headers.set("Accept", "application/json");
    }
    return new FuzzRequest("modern", HttpMethod.POST, path(rnd), headers, encode(rnd, msg), false, null);
  }

  private JsonObject baseMessage(Random rnd, String method, boolean modern) {
    JsonObject msg = new JsonObject().put("jsonrpc", "2.0");
    boolean notification = method.startsWith("notifications/") || rnd.nextInt(15) == 0;
    if (!notification) {
      msg.put("id", rnd.nextBoolean() ? (Object) rnd.nextInt(1_000_000) : "req-" + rnd.nextInt(1_000_000));
    }
    msg.put("method", method);
    JsonObject params = new JsonObject();
    JsonObject meta = new JsonObject();
    if (modern) {
      meta.put(META_VERSION, MODERN)
          .put("io.modelcontextprotocol/clientCapabilities", rnd.nextBoolean() ? new JsonObject() : randomValue(rnd, 2))
          .put("io.modelcontextprotocol/clientInfo", new JsonObject().put("name", "fuzz").put("version", "1"));
      if (rnd.nextInt(4) == 0) {
        meta.put("io.modelcontextprotocol/logLevel", rnd.nextBoolean() ? "debug" : randomValue(rnd, 1));
      }
    }
    if (rnd.nextInt(5) == 0) {
      meta.put("progressToken", rnd.nextBoolean() ? (Object) ("p-" + rnd.nextInt(1000)) : randomValue(rnd, 1));
    }
    if (!meta.isEmpty()) {
      params.put("_meta", meta);
    }
    switch (method) {
      case "tools/call" -> {
        params.put("name", TOOLS.get(rnd.nextInt(TOOLS.size())));
        params.put("arguments", toolArguments(rnd, params.getString("name")));
      }
      case "resources/read", "resources/subscribe", "resources/unsubscribe" -> params.put("uri", pickUri(rnd));
      case "prompts/get" -> params.put("name", rnd.nextBoolean() ? "explore-database" : marker).put("arguments", new JsonObject());
      case "completion/complete" -> params.put("ref", new JsonObject().put("type", rnd.nextBoolean() ? "ref/prompt" : "ref/resource")
          .put("name", "explore-database")).put("argument", new JsonObject().put("name", rnd.nextBoolean() ? "table" : "x")
          .put("value", rnd.nextBoolean() ? "cu" : marker));
      case "logging/setLevel" -> params.put("level", rnd.nextBoolean() ? "info" : marker);
      case "initialize" -> params.put("protocolVersion", VERSIONS.get(rnd.nextInt(VERSIONS.size())))
          .put("capabilities", rnd.nextBoolean() ? new JsonObject() : randomValue(rnd, 2))
          .put("clientInfo", new JsonObject().put("name", marker).put("version", "1"));
      case "notifications/cancelled" -> params.put("requestId", rnd.nextBoolean() ? (Object) rnd.nextInt(100) : marker)
          .put("reason", marker);
      case "subscriptions/listen" -> params.put("notifications", new JsonObject().put("resourcesListChanged", rnd.nextBoolean())
          .put("resourceSubscriptions", new JsonArray().add(pickUri(rnd))));
      default -> {
        if (rnd.nextInt(3) == 0) {
          params.put("cursor", marker);
        }
      }
    }
    if (!params.isEmpty() || rnd.nextBoolean()) {
      msg.put("params", params);
    }
    return msg;
  }

  private Object toolArguments(Random rnd, String tool) {
    JsonObject args = new JsonObject();
    switch (tool) {
      case "list_tables" -> args.put("schema", rnd.nextBoolean() ? "public" : marker);
      case "describe_table" -> args.put("table", rnd.nextBoolean() ? "customers" : marker);
      case "get_row" -> args.put("table", rnd.nextBoolean() ? "customers" : marker).put("key", rnd.nextBoolean() ? (Object) 1 : marker);
      case "list_rows" -> args.put("table", rnd.nextBoolean() ? "customers" : marker).put("limit", rnd.nextInt(5) + 1)
          .put("where", rnd.nextBoolean() ? new JsonObject().put("name", marker) : randomValue(rnd, 3));
      case "query", "explain" -> args.put("sql", List.of("SELECT 1", "SELECT '" + marker + "'", "SELECT $1::text", marker,
          "DELETE FROM customers", "SELECT * FROM " + marker).get(rnd.nextInt(6))).put("params", new JsonArray().add(marker));
      case "changes_since" -> args.put("cursor", marker);
      default -> {
        if (rnd.nextBoolean()) {
          args.put("anything", marker);
        }
      }
    }
    return args;
  }

  private String pickUri(Random rnd) {
    return List.of("tidemark://schema", "tidemark://changes", "tidemark://table/customers", "tidemark://row/customers/1",
        "tidemark://docs/http", "tidemark://docs/" + marker, "tidemark://table/" + marker, "tidemark://row/" + marker + "/%zz",
        "tidemark://row/customers/%", "file:///" + marker, marker, "").get(rnd.nextInt(12));
  }

  private String pickString(Random rnd) {
    return switch (rnd.nextInt(6)) {
      case 0 -> marker;
      case 1 -> "";
      case 2 -> "tools/call";
      case 3 -> "\u00e9\u4e2d";
      case 4 -> "x".repeat(rnd.nextInt(3000));
      default -> marker + "-" + rnd.nextInt(1000);
    };
  }

  /** Replaces, removes or adds something at one level of the message. */
  private void mutate(Random rnd, JsonObject msg) {
    List<JsonObject> levels = new ArrayList<>();
    levels.add(msg);
    if (msg.getValue("params") instanceof JsonObject p) {
      levels.add(p);
      if (p.getValue("_meta") instanceof JsonObject m) {
        levels.add(m);
      }
      if (p.getValue("arguments") instanceof JsonObject a) {
        levels.add(a);
        a.forEach(e -> {
          if (e.getValue() instanceof JsonObject nested) {
            levels.add(nested);
          }
        });
      }
    }
    JsonObject target = levels.get(rnd.nextInt(levels.size()));
    List<String> keys = new ArrayList<>(target.fieldNames());
    int op = rnd.nextInt(10);
    if (op < 5 && !keys.isEmpty()) {
      target.put(keys.get(rnd.nextInt(keys.size())), randomValue(rnd, 3)); // a wrong type, or a wrong value of the right type
    } else if (op < 7 && !keys.isEmpty()) {
      target.remove(keys.get(rnd.nextInt(keys.size())));
    } else {
      target.put(rnd.nextBoolean() ? "unknownField" : "x-" + rnd.nextInt(100), randomValue(rnd, 2));
    }
  }

  private Object randomValue(Random rnd, int depth) {
    int kind = rnd.nextInt(depth > 0 ? 16 : 12);
    return switch (kind) {
      case 0 -> null;
      case 1 -> rnd.nextBoolean();
      case 2 -> rnd.nextInt();
      case 3 -> rnd.nextLong();
      case 4 -> rnd.nextDouble() * 1e6 - 5e5;
      case 5 -> new java.math.BigInteger(200, rnd);
      case 6 -> marker;
      case 7 -> "";
      case 8 -> marker + "\u0000\n\t\"\\\ud83d\ude00";
      case 9 -> rnd.nextInt(20) == 0 ? marker + "y".repeat(100_000 + rnd.nextInt(100_000)) : marker + "-" + rnd.nextInt(1_000);
      case 10 -> -0.0;
      case 11 -> Long.MIN_VALUE;
      case 12, 13 -> {
        JsonArray a = new JsonArray();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          a.add(randomValue(rnd, depth - 1));
        }
        yield a;
      }
      default -> {
        JsonObject o = new JsonObject();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          o.put(rnd.nextBoolean() ? "k" + i : "name", randomValue(rnd, depth - 1));
        }
        yield o;
      }
    };
  }

  private Buffer encode(Random rnd, JsonObject msg) {
    String text = msg.encode();
    if (rnd.nextInt(12) == 0 && text.length() > 2) {
      text = text.substring(0, rnd.nextInt(text.length() - 1)); // truncated
    }
    return Buffer.buffer(text);
  }

  private String path(Random rnd) {
    int p = rnd.nextInt(40);
    return p == 0 ? "/mcp/" + marker : p == 1 ? "/mcp/main" : p == 2 ? "/" + marker : p == 3 ? "/mcp/main/extra" : "/mcp";
  }

  /** Bodies that are not a JSON-RPC message at all, with the session's headers. */
  private FuzzRequest rawBody(Random rnd) {
    MultiMap headers = rnd.nextInt(4) == 0 ? modernHeaders("ping", null) : legacyHeaders();
    String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    boolean chunked = false;
    Buffer body;
    switch (rnd.nextInt(16)) {
      case 0 -> body = Buffer.buffer();
      case 1 -> body = Buffer.buffer(List.of(" ", "null", "true", "42", "\"" + marker + "\"", "{}", "[]", "{\"jsonrpc\":\"2.0\"}")
          .get(rnd.nextInt(8)));
      case 2 -> body = Buffer.buffer("[" + ping + "," + ping + "]"); // a batch
      case 3 -> body = Buffer.buffer("[" + ping + "]");
      case 4 -> body = Buffer.buffer("[".repeat(10_000) + "]".repeat(10_000)); // deep nesting
      case 5 -> body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":" + "[".repeat(10_000)
          + "]".repeat(10_000) + "}}");
      case 6 -> { // nesting just under and over the parser's limit, inside tool arguments
        int depth = List.of(200, 900, 999, 1000, 1001, 3000).get(rnd.nextInt(6));
        body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"query\",\"arguments\":"
            + "{\"sql\":\"SELECT $1\",\"params\":[" + "[".repeat(depth) + "\"" + marker + "\"" + "]".repeat(depth) + "]}}}");
      }
      case 7 -> {
        int depth = List.of(200, 900, 999, 1000).get(rnd.nextInt(4));
        body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"list_rows\",\"arguments\":"
            + "{\"table\":\"customers\",\"where\":" + "{\"and\":[".repeat(depth) + "{}" + "]}".repeat(depth) + "}}}");
      }
      case 8 -> { // binary garbage
        byte[] bytes = new byte[rnd.nextInt(4096) + 1];
        rnd.nextBytes(bytes);
        body = Buffer.buffer(bytes);
      }
      case 9 -> { // a huge string, just under the cap
        body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + marker
            + "z".repeat(MAX_BODY - 200) + "\"}}");
      }
      case 10 -> { // over the cap, with Content-Length or chunked
        body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + "z".repeat(MAX_BODY + rnd.nextInt(100_000))
            + "\"}}");
        chunked = rnd.nextBoolean();
      }
      case 11 -> body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"jsonrpc\":\"1.0\"}"); // duplicate key
      case 12 -> body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":" + List.of("1e400", "1.5", "-0", "123456789012345678901234567890",
          "NaN", "01", "true", "[1]", "{}", "null").get(rnd.nextInt(10)) + ",\"method\":\"ping\"}");
      case 13 -> body = Buffer.buffer("\ufeff" + ping); // byte order mark
      case 14 -> body = Buffer.buffer(ping.getBytes(StandardCharsets.UTF_16)); // another encoding
      default -> body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" + "\\ud800" + "\",\"x\":\"\\u0000" + marker + "\"}");
    }
    if (rnd.nextInt(8) == 0 && body.length() > 2) {
      body = body.getBuffer(0, rnd.nextInt(body.length()));
    }
    return new FuzzRequest("raw", HttpMethod.POST, "/mcp", headers, body, chunked, null);
  }

  /** A valid message with broken, missing or hostile headers. */
  private FuzzRequest headerFuzz(Random rnd) {
    boolean modern = rnd.nextInt(3) == 0;
    MultiMap headers = modern ? modernHeaders("ping", null) : legacyHeaders();
    String body = modern
        ? new JsonObject().put("jsonrpc", "2.0").put("id", 1).put("method", "ping").put("params", new JsonObject()
            .put("_meta", new JsonObject().put(META_VERSION, MODERN))).encode()
        : "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
    if (modern) {
      headers.set("Mcp-Method", "ping");
    }
    Buffer stalled = null;
    int changes = 1 + rnd.nextInt(2);
    for (int i = 0; i < changes; i++) {
      switch (rnd.nextInt(13)) {
        case 0 -> headers.remove("Content-Type");
        case 1 -> headers.set("Content-Type", List.of("text/plain", "application/json; charset=utf-8", "APPLICATION/JSON",
            "application/jsonx", "", ";", marker, "multipart/form-data; boundary=x").get(rnd.nextInt(8)));
        case 2 -> {
          if (rnd.nextBoolean()) {
            headers.remove("Accept");
          } else {
            headers.set("Accept", List.of("text/event-stream", "application/json", "*/*", "text/html", marker).get(rnd.nextInt(5)));
          }
        }
        case 3 -> headers.set("MCP-Protocol-Version", VERSIONS.get(rnd.nextInt(VERSIONS.size())));
        case 4 -> headers.remove("MCP-Protocol-Version");
        case 5 -> headers.set("Mcp-Session-Id", List.of(marker, "", "0".repeat(32), "x".repeat(2000), sessionId + " ",
            sessionId.toUpperCase()).get(rnd.nextInt(6)));
        case 6 -> headers.remove("Mcp-Session-Id");
        case 7 -> headers.set("Origin", List.of("http://evil.example.com", "null", marker, "http://localhost:3000",
            "https://127.0.0.1", "file://", "http://[::1]:80", "http://%zz").get(rnd.nextInt(8)));
        case 8 -> {
          if (rnd.nextInt(3) == 0) { // failed checks are slowed down: keep them rare
            headers.set("Authorization", List.of("Bearer " + marker, "Basic " + marker, "", "Bearer", "bearer "
                + NodeHarness.READ_WRITE_TOKEN).get(rnd.nextInt(5)));
          }
        }
        case 9 -> headers.set("Host", List.of("evil.example.com", "localhost:1", "[::1]", "127.0.0.1:" + node.port(),
            marker).get(rnd.nextInt(5)));
        case 10 -> {
          if (rnd.nextInt(10) == 0) { // a body that never arrives: the body deadline answers
            stalled = Buffer.buffer(body.substring(0, body.length() / 2));
          }
        }
        case 11 -> headers.set("Mcp-Method", pickString(rnd));
        default -> headers.set("Mcp-Name", "=?base64?" + Base64.getEncoder().encodeToString(marker.getBytes(StandardCharsets.UTF_8)) + "?=");
      }
    }
    return new FuzzRequest("headers", HttpMethod.POST, path(rnd), headers, stalled == null ? Buffer.buffer(body) : null, false, stalled);
  }

  /** GET streams, DELETE of sessions that are not ours, and methods the endpoint does not serve. */
  private FuzzRequest otherMethod(Random rnd) {
    MultiMap headers = legacyHeaders();
    HttpMethod method = List.of(HttpMethod.GET, HttpMethod.GET, HttpMethod.PUT, HttpMethod.PATCH, HttpMethod.DELETE, HttpMethod.OPTIONS,
        HttpMethod.HEAD).get(rnd.nextInt(7));
    Buffer body = null;
    if (method == HttpMethod.GET) {
      switch (rnd.nextInt(5)) {
        case 0 -> headers.remove("Mcp-Session-Id");
        case 1 -> headers.set("Accept", "application/json");
        case 2 -> headers.set("Mcp-Session-Id", marker);
        case 3 -> headers.set("Last-Event-ID", List.of("0", "1", "-1", marker, "99999999999999999999", "9223372036854775807")
            .get(rnd.nextInt(6)));
        default -> { }
      }
    } else if (method == HttpMethod.DELETE) {
      // never the fuzz session itself: later requests need it
      if (rnd.nextBoolean()) {
        headers.set("Mcp-Session-Id", rnd.nextBoolean() ? marker : "0".repeat(32));
      } else {
        headers.remove("Mcp-Session-Id");
      }
    } else if (method != HttpMethod.HEAD && method != HttpMethod.OPTIONS) {
      body = Buffer.buffer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    }
    return new FuzzRequest("method", method, path(rnd), headers, body, false, null);
  }
}
