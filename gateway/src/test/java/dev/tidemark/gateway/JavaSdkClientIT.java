package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The official MCP Java SDK's client against a node, as a host uses it: tools listed first, so
 * that the client checks every result against the tool's output schema, and errors read from the
 * result rather than from an exception.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JavaSdkClientIT {

  private NodeHarness node;
  private McpSyncClient client;

  @BeforeAll
  void start(SharedInfra infra) {
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,command", Map.of());
    HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder("http://127.0.0.1:" + node.port())
        .endpoint("/mcp")
        .customizeRequest(r -> r.header("Authorization", "Bearer " + NodeHarness.READ_WRITE_TOKEN))
        .build();
    client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).enableCallToolSchemaCaching(true).build();
    client.initialize();
    List<McpSchema.Tool> tools = client.listTools().tools();
    assertTrue(tools.stream().allMatch(t -> t.outputSchema() != null), "every tool declares an output schema");
  }

  @AfterAll
  void stop() {
    if (client != null) {
      client.closeGracefully();
    }
    ServiceHarness.closeAll(node);
  }

  private Map<String, Object> error(String code, String tool, Map<String, Object> arguments) {
    McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest(tool, arguments));
    assertEquals(Boolean.TRUE, result.isError(), tool + " did not fail: " + result);
    @SuppressWarnings("unchecked")
    Map<String, Object> error = (Map<String, Object>) ((Map<String, Object>) result.structuredContent()).get("error");
    assertEquals(code, error.get("code"), result.toString());
    String message = (String) error.get("message");
    assertFalse(message == null || message.isBlank(), result.toString());
    String text = ((McpSchema.TextContent) result.content().get(0)).text();
    assertTrue(text.contains(code + ": " + message), text);
    return error;
  }

  @Test
  void aMisfitArgumentArrivesAsInvalidArgumentsWithItsFaults() {
    Map<String, Object> e = error("INVALID_ARGUMENTS", "list_tables", Map.of("schemas", "public"));
    assertFalse(((List<?>) e.get("faults")).isEmpty());
  }

  @Test
  void anUnknownTableArrivesAsNotFoundNamingTheArgument() {
    assertEquals("table", error("NOT_FOUND", "describe_table", Map.of("table", "no_such_table")).get("argument"));
  }

  @Test
  void transactionControlInExecuteArrivesAsTransactionStatement() {
    error("TRANSACTION_STATEMENT", "execute", Map.of("sql", "COMMIT"));
  }

  @Test
  void aResultStillPassesTheClientsSchemaCheck() {
    McpSchema.CallToolResult result = client.callTool(new McpSchema.CallToolRequest("list_tables", Map.of()));
    assertFalse(Boolean.TRUE.equals(result.isError()), result.toString());
  }
}
