package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.McpHttpClient.Reply;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** /metrics after known calls: the counts match them, the docs name every family, and no caller data shows. */
@ExtendWith(InfraExtension.class)
class MetricsIT {

  /** A value only the SQL of one call holds: it must never reach a label. */
  private static final String SECRET = "metrics-it-secret-5c1e";

  @Test
  void aScrapeCountsKnownCallsByToolAndOutcomeAndHoldsNoCallerData(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query", Map.of());
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      for (int i = 0; i < 3; i++) {
        assertFalse(isError(client.callTool("get_row", new JsonObject().put("table", "customers").put("key", 7))));
      }
      assertTrue(isError(client.callTool("get_row", new JsonObject().put("table", "customers").put("key", 987_654_321))));
      assertFalse(isError(client.callTool("query", new JsonObject().put("sql", "SELECT '" + SECRET + "' AS s"))));
      JsonObject unknown = client.rpc("tools/call", new JsonObject().put("name", "drop_" + SECRET).put("arguments", new JsonObject()));
      assertTrue(unknown.containsKey("error"), unknown.encode());

      try (McpHttpClient stray = new McpHttpClient("http://127.0.0.1:" + node.httpPort() + "/" + SECRET + "/x?token=" + SECRET, null)) {
        assertEquals(404, stray.send("GET", null, MultiMap.caseInsensitiveMultiMap()).status(), "a path nothing serves");
      }
      String first = scrape(node);
      Files.writeString(Path.of("target", "metrics-it-scrape.txt"), first);
      assertEquals(3.0, value(first, "tidemark_tool_calls_total", "outcome=\"ok\",tool=\"get_row\""), first);
      assertEquals(1.0, value(first, "tidemark_tool_calls_total", "outcome=\"NOT_FOUND\",tool=\"get_row\""));
      assertEquals(1.0, value(first, "tidemark_tool_calls_total", "outcome=\"ok\",tool=\"query\""));
      assertEquals(1.0, value(first, "tidemark_tool_calls_total", "outcome=\"protocol_error\",tool=\"other\""));
      assertEquals(4.0, value(first, "tidemark_tool_call_duration_seconds_count", "tool=\"get_row\""));
      assertTrue(value(first, "tidemark_tool_call_duration_seconds_bucket", "tool=\"get_row\",le=\"+Inf\"") == 4.0);
      assertEquals(0.0, value(first, "tidemark_streams_open", ""));
      assertTrue(value(first, "vertx_http_server_requests_total", "code=\"200\",method=\"POST\",route=\"/mcp\"") >= 6.0, first);
      assertTrue(first.contains("tidemark_event_loop_delay_seconds{loop=\"0\"}"), first);
      assertTrue(first.contains("jvm_memory_used_bytes"), first);
      assertTrue(Await.until(() -> value(scrape(node), "tidemark_sessions", "") >= 1.0, Duration.ofSeconds(15)),
          "the gateway counts the session it opened");

      for (String never : new String[] {SECRET, TestNodes.READ_ONLY_TOKEN, client.sessionId(), "customers"}) {
        assertFalse(first.contains(never), "the scrape holds " + never);
      }
      String docs = Files.readString(Path.of("..", "docs", "operations.md"));
      Set<String> undocumented = new TreeSet<>();
      for (String family : families(first)) {
        if (!docs.contains("`" + family + "`") && !docs.contains("`" + family.replaceAll("_[a-z]+$", "") + "_*`")
            && !docs.contains("`" + family.substring(0, family.indexOf('_') + 1) + "*`")) {
          undocumented.add(family);
        }
      }
      assertEquals(Set.of(), undocumented, "docs/operations.md names every metric family");
    } finally {
      TestNodes.stop(node);
    }
  }

  @Test
  void theNodeWhoseRelayPublishesShowsItsLag(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    TidemarkNode node = TestNodes.startAlone(infra, "changelog", Map.of(ConfigKey.KAFKA_TOPIC_PREFIX, "it.metrics."));
    try {
      assertTrue(Await.until(() -> value(scrape(node), "tidemark_relay_lag_changes", "") >= 0, Duration.ofSeconds(30)),
          "the relay's lag appears once it publishes");
      String scrape = scrape(node);
      assertTrue(value(scrape, "tidemark_relay_lag_seconds", "") >= 0, scrape);
      assertFalse(scrape.contains("tidemark_tool_calls_total"), "a node without a gateway counts no tool calls");
    } finally {
      TestNodes.stop(node);
    }
  }

  private static boolean isError(JsonObject result) {
    return result.getBoolean("isError", false);
  }

  static String scrape(TidemarkNode node) {
    try (McpHttpClient c = new McpHttpClient("http://127.0.0.1:" + node.opsPort() + "/metrics", null)) {
      Reply reply = c.send("GET", null, MultiMap.caseInsensitiveMultiMap());
      assertEquals(200, reply.status(), reply.body());
      assertTrue(reply.headers().get("Content-Type").startsWith("text/plain"), reply.headers().toString());
      return reply.body();
    }
  }

  /** The sample of {@code name} whose labels are exactly {@code labels} (sorted as Prometheus writes them), or -1. */
  static double value(String scrape, String name, String labels) {
    String head = labels.isEmpty() ? name + " " : name + "{" + labels + "} ";
    for (String line : scrape.split("\n")) {
      if (line.startsWith(head)) {
        return Double.parseDouble(line.substring(head.length()).trim().split(" ")[0]);
      }
    }
    return -1;
  }

  /** The metric family names the scrape declares with {@code # TYPE}. */
  static Set<String> families(String scrape) {
    Set<String> out = new TreeSet<>();
    Matcher m = Pattern.compile("^# TYPE (\\S+) ", Pattern.MULTILINE).matcher(scrape);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }
}
