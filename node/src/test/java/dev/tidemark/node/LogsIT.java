package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig.LogConfig;
import dev.tidemark.node.logging.JsonLineLayout;
import dev.tidemark.node.logging.LogSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** With log.format=json every line is one JSON object naming the call's ids, and no line holds a token, password or row value. */
@ExtendWith(InfraExtension.class)
class LogsIT {

  private static final String SECRET_VALUE = "logs-it-row-value-7f3a9";
  private static final String TRACE_ID = "5e1e0c6f3a9d4b7e8c2f1a0b9d8e7f6a";
  private static final String TRACEPARENT = "00-" + TRACE_ID + "-1a2b3c4d5e6f7081-01";

  /** Keeps every line the node logs, laid out as log.format=json writes it. */
  static final class Captured extends AppenderBase<ILoggingEvent> {
    final List<String> lines = new CopyOnWriteArrayList<>();
    private final JsonLineLayout layout = new JsonLineLayout();

    @Override
    protected void append(ILoggingEvent event) {
      lines.add(layout.doLayout(event));
    }
  }

  @Test
  void jsonLinesNameTheCallsIdsAndNeverATokenPasswordOrRowValue(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    Logger root = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(Logger.ROOT_LOGGER_NAME);
    Captured captured = new Captured();
    captured.start();
    root.addAppender(captured);
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query", Map.of(ConfigKey.LOG_FORMAT, "json", ConfigKey.LOG_LEVEL, "debug"));
    String sessionId;
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
      client.initialize();
      sessionId = client.sessionId();
      JsonObject read = client.post(client.request("tools/call", new JsonObject().put("name", "query")
              .put("arguments", new JsonObject().put("sql", "SELECT '" + SECRET_VALUE + "' AS v"))).toBuffer(),
          MultiMap.caseInsensitiveMultiMap().add("traceparent", TRACEPARENT).add("Accept", "application/json")).json().getJsonObject("result");
      assertFalse(read.getBoolean("isError", false), read.encode());
      JsonObject refused = client.callTool("query", new JsonObject().put("sql", "SELECT '" + SECRET_VALUE + "'::int AS v"));
      assertTrue(refused.getBoolean("isError", false), refused.encode());
      try (McpHttpClient ro = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN)) {
        ro.initialize();
        ro.callTool("get_row", new JsonObject().put("table", "customers").put("key", SECRET_VALUE));
      }
    } finally {
      TestNodes.stop(node);
      root.detachAppender(captured);
      LogSetup.apply(new LogConfig("text", "info")); // the next test class of this JVM logs as usual
    }

    List<String> lines = captured.lines;
    java.nio.file.Files.write(java.nio.file.Path.of("target", "logs-it.jsonl"), lines);
    assertTrue(lines.size() > 3, "the node logged " + lines);
    List<JsonObject> json = lines.stream().map(l -> new JsonObject(l.strip())).toList();
    JsonObject ended = json.stream().filter(j -> j.getString("message").startsWith("tool query ended ok")).findFirst()
        .orElseThrow(() -> new AssertionError("no line for the query call: " + lines));
    assertEquals(sessionId, ended.getString("session_id"), ended.encode());
    assertTrue(ended.getString("caller_id", "").length() > 0, ended.encode());
    assertTrue(ended.getString("request_id", "").length() > 0, ended.encode());
    assertEquals("DEBUG", ended.getString("level"));
    assertEquals(TRACE_ID, ended.getString("trace_id"), "the call joined the trace its traceparent named: " + ended.encode());
    JsonObject untraced = json.stream().filter(j -> j.getString("message").startsWith("tool get_row ended")).findFirst()
        .orElseThrow(() -> new AssertionError("no line for the get_row call: " + lines));
    assertTrue(untraced.getString("trace_id", "").matches("[0-9a-f]{32}") && !untraced.getString("trace_id").equals(TRACE_ID),
        "a call without a traceparent starts its own trace, named in its lines: " + untraced.encode());
    assertTrue(json.stream().anyMatch(j -> j.getString("message").startsWith("tool query ended INVALID_ARGUMENTS")
        || j.getString("message").startsWith("tool query ended ")), lines.toString());

    List<String> secrets = new java.util.ArrayList<>(List.of(SECRET_VALUE, TestNodes.READ_WRITE_TOKEN, TestNodes.READ_ONLY_TOKEN));
    secrets.addAll(TestNodes.CALLER_PASSWORDS.values());
    for (String secret : secrets) {
      List<String> leaking = lines.stream().filter(l -> l.contains(secret)).toList();
      assertEquals(List.of(), leaking, "lines that hold " + secret);
    }
  }
}
