package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two clustered nodes over 127.0.0.1, each its own Hazelcast member: A runs only the gateway, B
 * only the query service, so every tool call crosses the clustered event bus.
 */
@ExtendWith(InfraExtension.class)
class TwoNodeClusterIT {

  private static final long SEND_TIMEOUT_MS = 3_000;

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(a);
    TestNodes.stop(b);
  }

  @Test
  void aCallToTheGatewayIsAnsweredByTheQueryNodeFailsFastWhileItIsGoneAndRecovers(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> gatewayOnly = TestNodes.config(infra, cluster, ports[0], members, "gateway");
    gatewayOnly.put(ConfigKey.BUS_SEND_TIMEOUT_MS, String.valueOf(SEND_TIMEOUT_MS));
    gatewayOnly.put(ConfigKey.NODE_ID, "node-a");
    Map<ConfigKey, String> queryOnly = TestNodes.config(infra, cluster, ports[1], members, "query");
    queryOnly.put(ConfigKey.NODE_ID, "node-b");

    a = TestNodes.start(gatewayOnly);
    b = TestNodes.start(queryOnly);
    assertEquals(2, a.clusterSize());
    assertEquals(-1, b.httpPort(), "B runs no gateway");

    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      JsonObject status = client.callTool("status", new JsonObject()).getJsonObject("structuredContent");
      assertEquals("node-b", status.getString("node"), "the query service on B answered");
      assertEquals(2, status.getJsonObject("cluster").getInteger("size"));
      assertEquals(false, status.getJsonObject("kafka").getBoolean("reachable"), "no node runs the changelog role");
      JsonObject tables = client.callTool("list_tables", new JsonObject());
      assertTrue(tables.getJsonObject("structuredContent").getJsonArray("tables").size() >= 5);

      TestNodes.stop(b);
      b = null;
      long started = System.nanoTime();
      JsonObject failed = client.callTool("list_tables", new JsonObject());
      long millis = (System.nanoTime() - started) / 1_000_000;
      assertEquals(true, failed.getBoolean("isError"));
      assertEquals("UNAVAILABLE", failed.getJsonObject("structuredContent").getJsonObject("error").getString("code"));
      assertTrue(millis <= SEND_TIMEOUT_MS + 1_000, "failed within the send timeout, took " + millis + " ms");

      b = TestNodes.start(queryOnly);
      JsonObject back = client.callTool("status", new JsonObject());
      assertEquals(null, back.getValue("isError"), back.encode());
      assertEquals("node-b", back.getJsonObject("structuredContent").getString("node"));
    }
  }
}
