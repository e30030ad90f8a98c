package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Subscriptions per session (or listen stream) and per caller are bounded: past
 * {@code resources.max-subscriptions-per-session} or {@code -per-caller} a subscription is refused
 * with -32030 naming the limit, changing nothing, while another caller goes on; an unsubscribe or a
 * session's end makes room.
 */
@ExtendWith(InfraExtension.class)
class SubscriptionLimitsIT {

  private NodeHarness node;
  private String url;
  private SharedInfra infra;

  @BeforeEach
  void start(SharedInfra infra) {
    this.infra = infra;
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query,changelog", Map.of(
        ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_SESSION, "2",
        ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_CALLER, "3"));
    url = node.mcpUrl();
  }

  @AfterEach
  void stop() {
    ServiceHarness.closeAll(node);
  }

  private static JsonObject subscribe(McpHttpClient c, String uri) {
    return c.rpc("resources/subscribe", new JsonObject().put("uri", uri));
  }

  private static void subscribed(McpHttpClient c, String uri) {
    JsonObject answer = subscribe(c, uri);
    assertEquals(new JsonObject(), answer.getJsonObject("result"), answer::encode);
  }

  private static JsonObject refused(JsonObject answer, String limit, int max) {
    JsonObject error = answer.getJsonObject("error");
    assertNotNull(error, answer::encode);
    assertEquals(-32030, error.getInteger("code"), answer::encode);
    assertEquals(new JsonObject().put("code", "LIMIT_EXCEEDED").put("limit", limit).put("max", max).put("retriable", false),
        error.getJsonObject("data"), answer::encode);
    assertTrue(error.getString("message").contains("Nothing was subscribed"), answer::encode);
    return error;
  }

  @Test
  void subscriptionsPastASessionsOrACallersLimitAreRefusedNamingItAndAnUnsubscribeOrASessionsEndMakesRoom() throws Exception {
    try (McpHttpClient first = node.connect(NodeHarness.READ_ONLY_TOKEN);
        McpHttpClient second = node.connect(NodeHarness.READ_ONLY_TOKEN);
        McpHttpClient otherCaller = node.connect(NodeHarness.READ_WRITE_TOKEN)) {
      subscribed(first, "tidemark://table/customers");
      subscribed(first, "tidemark://row/customers/1");
      subscribed(first, "tidemark://row/customers/1"); // again: it holds it already, and counts once
      refused(subscribe(first, "tidemark://row/customers/2"), "resources.max-subscriptions-per-session", 2);

      subscribed(second, "tidemark://table/orders");
      refused(subscribe(second, "tidemark://table/products"), "resources.max-subscriptions-per-caller", 3);
      subscribed(otherCaller, "tidemark://table/products"); // another caller is not held back by this one

      // the refused subscription changed nothing: a change to its row reaches the session through its table only
      try (SseStream stream = SseStream.open(HttpMethod.GET, url, NodeHarness.streamHeaders(first, null), null)) {
        assertEquals(200, stream.status());
        try (Connection c = ServiceHarness.jdbc(infra)) {
          c.createStatement().execute("UPDATE customers SET notes = 'limits " + System.nanoTime() + "' WHERE id = 2");
        }
        JsonObject heard = stream.await("notifications/resources/updated", 15_000);
        assertNotNull(heard, "the table's subscriber hears the change");
        assertEquals("tidemark://table/customers", heard.getJsonObject("params").getString("uri"));
        assertNull(stream.await("notifications/resources/updated", 1_000), "and nothing of the row it was refused");
      }

      assertEquals(new JsonObject(), first.rpc("resources/unsubscribe", new JsonObject().put("uri", "tidemark://row/customers/1"))
          .getJsonObject("result"));
      subscribed(second, "tidemark://table/products");

      refused(listen(List.of("tidemark://table/customers", "tidemark://table/orders", "tidemark://table/products")),
          "resources.max-subscriptions-per-session", 2);
      refused(listen(List.of("tidemark://table/customers")), "resources.max-subscriptions-per-caller", 3);

      assertEquals(200, second.delete().status());
      try (SseStream listening = SseStream.open(HttpMethod.POST, url, NodeHarness.listenHeaders(NodeHarness.READ_ONLY_TOKEN),
          NodeHarness.listenRequest("limits", List.of("tidemark://table/customers")).toBuffer())) {
        assertEquals("notifications/subscriptions/acknowledged", listening.next(15_000).data().getString("method"),
            "the ended session's subscriptions no longer count");
      }
    }
  }

  private JsonObject listen(List<String> uris) {
    try (McpHttpClient raw = new McpHttpClient(url, null)) {
      McpHttpClient.Reply reply = raw.post(NodeHarness.listenRequest("limits", uris).toBuffer(),
          NodeHarness.listenHeaders(NodeHarness.READ_ONLY_TOKEN));
      assertEquals(200, reply.status(), reply.body());
      return reply.json();
    }
  }
}
