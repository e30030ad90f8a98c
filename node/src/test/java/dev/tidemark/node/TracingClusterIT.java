package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two clustered nodes, the gateway on A and the query role on B, both exporting by OTLP/HTTP to a
 * receiver in this test that decodes what arrives as OTLP protobuf: one call's spans on both
 * nodes share the trace the client named, the service's span is the gateway span's child, and
 * PostgreSQL sees the service span's context in the call's own transaction.
 */
@ExtendWith(InfraExtension.class)
class TracingClusterIT {

  private static final String TRACE_A = "0af7651916cd43dd8448eb211c80319c";
  private static final String CLIENT_SPAN_A = "b7ad6b7169203331";
  private static final String TRACE_B = "4bf92f3577b34da6a3ce929d0e0e4736";
  private static final String CLIENT_SPAN_B = "00f067aa0ba902b7";

  /** One span as the receiver got it: who exported it and what it names, no more. */
  record Received(String node, String traceId, String spanId, String parentSpanId, String name, Map<String, String> attributes) {}

  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final List<String> contentTypes = new CopyOnWriteArrayList<>();
  private Vertx receiverVertx;
  private HttpServer receiver;
  private TidemarkNode a;
  private TidemarkNode b;

  @BeforeEach
  void startReceiver() {
    receiverVertx = Vertx.vertx();
    receiver = TestNodes.await(receiverVertx.createHttpServer()
        .requestHandler(req -> {
          if (!"/v1/traces".equals(req.path())) {
            req.response().setStatusCode(404).end();
            return;
          }
          contentTypes.add(String.valueOf(req.getHeader("Content-Type")));
          req.body().onSuccess(body -> {
            try {
              collect(ExportTraceServiceRequest.parseFrom(body.getBytes()));
              req.response().putHeader("Content-Type", "application/x-protobuf")
                  .end(Buffer.buffer(ExportTraceServiceResponse.getDefaultInstance().toByteArray()));
            } catch (Exception e) {
              req.response().setStatusCode(400).end();
            }
          });
        })
        .listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture());
  }

  @AfterEach
  void stop() {
    TestNodes.stop(a);
    TestNodes.stop(b);
    TestNodes.await(receiverVertx.close().toCompletionStage().toCompletableFuture());
  }

  private void collect(ExportTraceServiceRequest request) {
    for (ResourceSpans resource : request.getResourceSpansList()) {
      String node = resource.getResource().getAttributesList().stream().filter(kv -> kv.getKey().equals("service.instance.id"))
          .map(kv -> kv.getValue().getStringValue()).findFirst().orElse("?");
      for (ScopeSpans scope : resource.getScopeSpansList()) {
        for (io.opentelemetry.proto.trace.v1.Span span : scope.getSpansList()) {
          Map<String, String> attributes = new LinkedHashMap<>();
          for (KeyValue kv : span.getAttributesList()) {
            attributes.put(kv.getKey(), kv.getValue().getStringValue());
          }
          received.add(new Received(node, hex(span.getTraceId()), hex(span.getSpanId()), hex(span.getParentSpanId()), span.getName(),
              attributes));
        }
      }
    }
  }

  private static String hex(ByteString bytes) {
    return HexFormat.of().formatHex(bytes.toByteArray());
  }

  private Optional<Received> span(String node, String traceId, String name) {
    return received.stream().filter(s -> s.node().equals(node) && s.traceId().equals(traceId) && s.name().equals(name)).findFirst();
  }

  /** Waits for the gateway's span of one call on A and the service's on B; the batch processor exports within seconds. */
  private Received[] spansOf(String traceId, String gatewayName, String serviceName) {
    assertTrue(Await.until(() -> span("node-a", traceId, gatewayName).isPresent() && span("node-b", traceId, serviceName).isPresent(),
        Duration.ofSeconds(30)), "spans of trace " + traceId + " on both nodes; received " + received);
    return new Received[] {span("node-a", traceId, gatewayName).orElseThrow(), span("node-b", traceId, serviceName).orElseThrow()};
  }

  @Test
  void oneCallsSpansShareTheClientsTraceAcrossTwoNodesAndPostgresSeesTheServiceSpan(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    String endpoint = "http://127.0.0.1:" + receiver.actualPort() + "/v1/traces";
    Map<ConfigKey, String> gatewayOnly = TestNodes.config(infra, cluster, ports[0], members, "gateway");
    gatewayOnly.put(ConfigKey.NODE_ID, "node-a");
    gatewayOnly.put(ConfigKey.TRACING_OTLP_ENDPOINT, endpoint);
    Map<ConfigKey, String> queryOnly = TestNodes.config(infra, cluster, ports[1], members, "query");
    queryOnly.put(ConfigKey.NODE_ID, "node-b");
    queryOnly.put(ConfigKey.TRACING_OTLP_ENDPOINT, endpoint);
    // a sampled parent is followed whatever the ratio: only the client's flag decides
    queryOnly.put(ConfigKey.TRACING_SAMPLE_RATIO, "0");
    b = TestNodes.start(queryOnly);
    a = TestNodes.start(gatewayOnly);

    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      // 2025-11-25: the traceparent comes as an HTTP header
      JsonObject call = client.request("tools/call", new JsonObject().put("name", "query")
          .put("arguments", new JsonObject().put("sql", "SELECT current_setting('tidemark.traceparent', true) AS tp")));
      McpHttpClient.Reply reply = client.post(call.toBuffer(), MultiMap.caseInsensitiveMultiMap()
          .add("traceparent", "00-" + TRACE_A + "-" + CLIENT_SPAN_A + "-01").add("Accept", "application/json"));
      JsonObject result = reply.json().getJsonObject("result");
      assertFalse(result.getBoolean("isError", false), result.encode());
      String seenByPostgres = result.getJsonObject("structuredContent").getJsonArray("rows").getJsonObject(0).getString("tp");

      Received[] spans = spansOf(TRACE_A, "tools/call query", "query query");
      Received gateway = spans[0];
      Received service = spans[1];
      assertEquals(CLIENT_SPAN_A, gateway.parentSpanId(), "the gateway's span is the child of the client's");
      assertEquals(gateway.spanId(), service.parentSpanId(), "the service's span on B is the child of the gateway's on A");
      assertEquals("00-" + TRACE_A + "-" + service.spanId() + "-01", seenByPostgres,
          "PostgreSQL holds the context of the span that ran the statement, in the call's own transaction");
      assertEquals(Map.of("mcp.method.name", "tools/call", "gen_ai.tool.name", "query", "tidemark.outcome", "ok"), gateway.attributes());
      assertEquals(Map.of("gen_ai.tool.name", "query", "tidemark.outcome", "ok"), service.attributes());
      assertTrue(received.stream().noneMatch(s -> s.attributes().values().stream().anyMatch(v -> v.contains("current_setting"))),
          "no span carries the caller's SQL");

      // 2026-07-28: the traceparent comes in params._meta, and wins over a header
      JsonObject meta = new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
          .put("io.modelcontextprotocol/clientCapabilities", new JsonObject())
          .put("traceparent", "00-" + TRACE_B + "-" + CLIENT_SPAN_B + "-01");
      MultiMap headers = MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN)
          .add("Content-Type", "application/json").add("Accept", "application/json").add("MCP-Protocol-Version", "2026-07-28")
          .add("Mcp-Method", "tools/call").add("Mcp-Name", "list_tables")
          .add("traceparent", "00-" + TRACE_A + "-" + CLIENT_SPAN_A + "-01");
      JsonObject modern = client.send("POST", new JsonObject().put("jsonrpc", "2.0").put("id", 7).put("method", "tools/call")
          .put("params", new JsonObject().put("name", "list_tables").put("arguments", new JsonObject()).put("_meta", meta)).toBuffer(), headers)
          .json().getJsonObject("result");
      assertEquals("complete", modern.getString("resultType"), modern.encode());
      Received[] modernSpans = spansOf(TRACE_B, "tools/call list_tables", "query list_tables");
      assertEquals(CLIENT_SPAN_B, modernSpans[0].parentSpanId());
      assertEquals(modernSpans[0].spanId(), modernSpans[1].parentSpanId());

      // a refused call is one span too, and says how it ended in codes, not text
      JsonObject refused = client.callTool("get_row", new JsonObject().put("table", "no_such_table_here").put("key", 1));
      assertTrue(refused.getBoolean("isError", false), refused.encode());
      assertTrue(Await.until(() -> received.stream().anyMatch(s -> s.node().equals("node-a") && s.name().equals("tools/call get_row")
          && "NOT_FOUND".equals(s.attributes().get("tidemark.outcome")) && "NOT_FOUND".equals(s.attributes().get("error.type"))),
          Duration.ofSeconds(30)), "the refused get_row's span; received " + received);
      assertTrue(received.stream().noneMatch(s -> s.attributes().values().stream().anyMatch(v -> v.contains("no_such_table_here"))
          || s.name().contains("no_such_table_here")), "no span names what the caller sent");
    }
    assertTrue(contentTypes.stream().allMatch(t -> t.startsWith("application/x-protobuf")), contentTypes.toString());
  }
}
