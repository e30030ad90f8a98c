package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A session's waiting watches are bounded on its gateway (watch.max-waiting-per-session): one
 * more is refused with LIMIT_EXCEEDED naming the limit, and another session of the same token is
 * not. (The per-caller bound on a query node is tested in query-service's WatchIT.)
 */
@ExtendWith(InfraExtension.class)
class WatchLimitsIT {

  private static final int PER_SESSION = 1;
  private static final int WAIT_MS = 8_000;

  @Test
  void aSessionPastItsWaitingWatchesIsRefusedAndAnotherSessionOfTheSameTokenIsNot(SharedInfra infra) throws Exception {
    NodeHarness node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query",
        Map.of(ConfigKey.WATCH_MAX_WAITING_PER_SESSION, String.valueOf(PER_SESSION)));
    ExecutorService threads = Executors.newFixedThreadPool(PER_SESSION + 1);
    try (McpHttpClient first = node.connect(NodeHarness.READ_ONLY_TOKEN);
         McpHttpClient second = node.connect(NodeHarness.READ_ONLY_TOKEN)) {
      JsonObject args = new JsonObject().put("table", "customers");
      JsonObject snapshot = first.callTool("watch", args);
      assertFalse(snapshot.getBoolean("isError", false), snapshot.encode());
      String cursor = snapshot.getJsonObject("structuredContent").getString("cursor");
      JsonObject waiting = args.copy().put("cursor", cursor).put("wait_ms", WAIT_MS);

      // one call more than the limit, at once: exactly one is refused, at once
      List<CompletableFuture<JsonObject>> calls = new ArrayList<>();
      for (int i = 0; i <= PER_SESSION; i++) {
        calls.add(CompletableFuture.supplyAsync(() -> first.callTool("watch", waiting), threads));
      }
      Await.that("the call past the limit answered", Duration.ofSeconds(30), () -> calls.stream().anyMatch(CompletableFuture::isDone));
      assertEquals(PER_SESSION, calls.stream().filter(c -> !c.isDone()).count(), "calls still waiting");
      JsonObject refused = calls.stream().filter(CompletableFuture::isDone).findFirst().orElseThrow().join();
      assertTrue(refused.getBoolean("isError", false), refused.encode());
      JsonObject error = refused.getJsonObject("structuredContent").getJsonObject("error");
      assertEquals("LIMIT_EXCEEDED", error.getString("code"), error::encode);
      assertEquals("watch.max-waiting-per-session", error.getString("limit"));
      assertEquals(PER_SESSION, error.getInteger("max_waiting"));

      // the same token's other session waits as usual
      JsonObject other = second.callTool("watch", args.copy().put("cursor", cursor).put("wait_ms", 1));
      assertFalse(other.getBoolean("isError", false), other.encode());

      for (CompletableFuture<JsonObject> c : calls) {
        JsonObject result = c.get(60, TimeUnit.SECONDS);
        assertTrue(result == refused || !result.getBoolean("isError", false), result::encode);
      }
      // its waits over, the first session may wait again
      JsonObject again = first.callTool("watch", waiting.copy().put("wait_ms", 1));
      assertFalse(again.getBoolean("isError", false), again.encode());
    } finally {
      threads.shutdownNow();
      ServiceHarness.closeAll(node);
    }
  }
}
