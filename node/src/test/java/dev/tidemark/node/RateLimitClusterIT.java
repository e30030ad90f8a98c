package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** auth.rate-limit.*: one caller's budget, held across both gateways of a cluster. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RateLimitClusterIT {

  private static final int PER_MINUTE = 6;

  private TidemarkNode[] pair;

  @BeforeAll
  void start(SharedInfra infra) {
    pair = TestNodes.startGatewayPair(infra, Map.of(ConfigKey.AUTH_RATE_LIMIT_CALLS_PER_MINUTE, String.valueOf(PER_MINUTE)));
  }

  @AfterAll
  void stop() {
    for (TidemarkNode n : pair) {
      TestNodes.stop(n);
    }
  }

  private static JsonObject statusCall(int id) {
    return new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", "tools/call")
        .put("params", new JsonObject().put("name", "status").put("arguments", new JsonObject()));
  }

  @Test
  void aCallerAlternatingBetweenGatewaysSharesOneBudgetAndIsToldWhenToRetry() {
    // the budget is counted in one-minute windows aligned to the clock: start with enough of one left
    assertTrue(Await.until(() -> 60_000 - System.currentTimeMillis() % 60_000 >= 20_000, Duration.ofSeconds(25)));
    try (McpHttpClient a = new McpHttpClient(TestNodes.mcpUrl(pair[0]), TestNodes.READ_WRITE_TOKEN);
        McpHttpClient b = new McpHttpClient(TestNodes.mcpUrl(pair[1]), TestNodes.READ_WRITE_TOKEN);
        McpHttpClient other = new McpHttpClient(TestNodes.mcpUrl(pair[0]), TestNodes.READ_ONLY_TOKEN)) {
      a.initialize();
      b.initialize();
      other.initialize();
      for (int i = 0; i < PER_MINUTE; i++) {
        McpHttpClient.Reply r = (i % 2 == 0 ? a : b).post(statusCall(i + 10));
        assertEquals(200, r.status(), "call " + i + " is within the budget: " + r.body());
      }
      for (McpHttpClient c : List.of(a, b)) {
        McpHttpClient.Reply refused = c.post(statusCall(99));
        assertEquals(429, refused.status(), refused.body());
        int retryAfter = Integer.parseInt(refused.headers().get("Retry-After"));
        assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
        JsonObject error = refused.json().getJsonObject("error");
        assertEquals(-32029, error.getInteger("code"));
        assertEquals(99, refused.json().getInteger("id"));
        assertEquals(retryAfter, error.getJsonObject("data").getInteger("retryAfterSeconds"));
        assertTrue(error.getString("message").contains("6 tool calls a minute"), error.encode());
      }
      assertEquals(200, other.post(statusCall(1)).status(), "another caller has a budget of its own");
      assertEquals(200, a.post(new JsonObject().put("jsonrpc", "2.0").put("id", 5).put("method", "tools/list")).status(),
          "only tool calls count");
    }
  }

  @Test
  void failedCredentialChecksFromOneSourceAreAnsweredEverLater() {
    String guess = "tmk_aGuessThatIsNotAToken000000000000000";
    long[] took = new long[3];
    for (int i = 0; i < took.length; i++) {
      try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(pair[1]), guess + i)) {
        long started = System.nanoTime();
        assertEquals(401, c.post(statusCall(1)).status());
        took[i] = (System.nanoTime() - started) / 1_000_000;
      }
    }
    assertTrue(took[2] >= 3 * 250, "the third failure in a minute waits at least 750 ms: " + took[2] + " ms");
  }
}
