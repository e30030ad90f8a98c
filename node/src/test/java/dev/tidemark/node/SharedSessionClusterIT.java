package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpClients;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One 2025-11-25 session shared by many calls at once, on a pair of gateways: parallel calls never
 * fail, and a stream resumed on the other gateway replays its own missed events and nothing of the
 * streams the other calls opened meanwhile.
 */
@ExtendWith(InfraExtension.class)
class SharedSessionClusterIT {

  @Test
  void sixteenParallelCallToolsOfTheTypeScriptSdkInOneSessionAllSucceedWithTheirOwnRow(SharedInfra infra) throws Exception {
    McpClients.install();
    try (TestNodes.GatewayPair pair = TestNodes.GatewayPair.start(infra)) {
      sixteenParallelCallTools(pair.a());
    }
  }

  private static void sixteenParallelCallTools(TidemarkNode a) throws Exception {
    // on A, which runs only the gateway: every call also crosses the cluster to B's query service
    McpClients.Run run = McpClients.node(List.of("sdk-client.mjs", "parallel", TestNodes.mcpUrl(a), "16", "50",
        TestNodes.READ_ONLY_TOKEN), 300);
    System.out.println(run.output());
    assertEquals(0, run.exitCode(), run.output());
    assertTrue(run.output().contains("\"calls\":800,\"ok\":800,\"wrong\":0,\"errors\":0,\"with_progress\":192"), run.output());
    assertTrue(run.output().trim().endsWith("OK"), run.output());
  }

  /** A tools/call get_row that asks for progress, so that its answer is an event stream of its own. */
  private static JsonObject streamedGetRow(String id, int key) {
    return new JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", "tools/call").put("params", new JsonObject()
        .put("name", "get_row").put("arguments", new JsonObject().put("table", "customers").put("key", key))
        .put("_meta", new JsonObject().put("progressToken", "progress-" + id)));
  }

  private static MultiMap postHeaders(String sessionId) {
    return MultiMap.caseInsensitiveMultiMap().add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN)
        .add("Content-Type", "application/json").add("Accept", "application/json, text/event-stream")
        .add("Mcp-Session-Id", sessionId).add("MCP-Protocol-Version", "2025-11-25");
  }

  /** Calls on both gateways in the session until {@code stop}; what went wrong goes to {@code faults}. */
  private static List<Future<?>> callInParallel(ExecutorService pool, List<McpHttpClient> gateways, String sessionId,
      AtomicBoolean stop, AtomicInteger done, Queue<String> faults) {
    List<Future<?>> workers = new ArrayList<>();
    for (int w = 0; w < 6; w++) {
      int worker = w;
      workers.add(pool.submit(() -> {
        for (int i = 0; !stop.get(); i++) {
          int key = 1 + (worker * 83 + i) % 500;
          String id = "w" + worker + "-" + i;
          McpHttpClient.Reply reply = gateways.get(i % 2).send("POST", streamedGetRow(id, key).toBuffer(), postHeaders(sessionId));
          JsonObject response = reply.status() == 200 && reply.isStream() ? reply.json() : null;
          JsonObject row = response == null || response.getJsonObject("result") == null ? null
              : response.getJsonObject("result").getJsonObject("structuredContent").getJsonObject("row");
          if (row == null || row.getInteger("id") != key || !id.equals(response.getString("id"))) {
            faults.add(reply.status() + " " + reply.body());
          }
          done.incrementAndGet();
        }
      }));
    }
    return workers;
  }

  @Test
  void aStreamResumedOnTheOtherGatewayReplaysItsOwnMissedEventsAndNoneOfTheParallelCalls(SharedInfra infra) throws Exception {
    try (TestNodes.GatewayPair pair = TestNodes.GatewayPair.start(infra)) {
      resumeOnTheOtherGateway(infra, pair.a(), pair.b());
    }
  }

  private static void resumeOnTheOtherGateway(SharedInfra infra, TidemarkNode a, TidemarkNode b) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(6);
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger done = new AtomicInteger();
    Queue<String> faults = new ConcurrentLinkedQueue<>();
    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN);
         McpHttpClient onA = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN);
         McpHttpClient onB = new McpHttpClient(TestNodes.mcpUrl(b), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      assertEquals(new JsonObject(), client.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/products"))
          .getJsonObject("result"));
      List<Future<?>> workers = callInParallel(pool, List.of(onA, onB), client.sessionId(), stop, done, faults);
      assertTrue(Await.until(() -> done.get() >= 12, Duration.ofSeconds(30)), "the parallel calls run");

      // a POST stream on A that hears progress, left after its first progress event
      JsonObject slow = new JsonObject().put("jsonrpc", "2.0").put("id", "slow-1").put("method", "tools/call").put("params",
          new JsonObject().put("name", "query").put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(2.5) AS slept"))
              .put("_meta", new JsonObject().put("progressToken", "slow-progress")));
      String slowSeen;
      try (SseStream post = SseStream.open(HttpMethod.POST, TestNodes.mcpUrl(a), postHeaders(client.sessionId()), slow.toBuffer())) {
        JsonObject progress = post.await("notifications/progress", 15_000);
        assertNotNull(progress, "the slow call reports progress");
        slowSeen = progress.getString("_event_id");
      }

      // the GET stream on A, left after its first notification; two more changes commit while it is closed
      String getSeen;
      try (SseStream get = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(a), GatewayClusterIT.streamHeaders(client, null), null)) {
        assertEquals(200, get.status());
        GatewayClusterIT.sql(infra, "UPDATE products SET description = 'seen on A' WHERE id = 4");
        JsonObject first = get.await("notifications/resources/updated", 15_000);
        assertNotNull(first, "the subscriber on A hears a change");
        getSeen = first.getString("_event_id");
      }
      GatewayClusterIT.changeAndAwaitItsNotification(infra, b, "UPDATE products SET description = 'missed 1' WHERE id = 5");
      GatewayClusterIT.sql(infra, "UPDATE products SET description = 'missed 2' WHERE id = 6");

      // the GET stream resumed on B: the two missed notifications, and only GET-stream events
      try (SseStream get = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(b), GatewayClusterIT.streamHeaders(client, getSeen), null)) {
        assertEquals(200, get.status());
        List<McpHttpClient.SseEvent> heard = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (heard.size() < 2 && System.nanoTime() < deadline) {
          McpHttpClient.SseEvent e = get.next(TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
          if (e != null) {
            heard.add(e);
          }
        }
        assertEquals(2, heard.size(), "both missed notifications: " + heard);
        long previous = SseStream.seqOf(getSeen);
        for (McpHttpClient.SseEvent e : heard) {
          assertEquals("g", SseStream.streamOf(e.id()), "a GET-stream event: " + e);
          assertEquals("notifications/resources/updated", e.data().getString("method"), "nothing of the calls' streams: " + e);
          assertTrue(SseStream.seqOf(e.id()) > previous, "in order, after the last one seen: " + heard);
          previous = SseStream.seqOf(e.id());
        }
      }

      // the POST stream resumed on B, once the call ended on A: the rest of its own events, its response last
      String stream = SseStream.streamOf(slowSeen);
      MultiMap resume = GatewayClusterIT.streamHeaders(client, slowSeen);
      List<List<McpHttpClient.SseEvent>> replays = new ArrayList<>();
      assertTrue(Await.until(() -> {
        McpHttpClient.Reply reply = onB.send("GET", null, resume);
        // before the call ends its stream has nothing after the event seen, and the answer has no body
        List<McpHttpClient.SseEvent> replay = reply.body() == null ? List.of() : reply.events();
        replays.add(replay);
        return !replay.isEmpty() && "slow-1".equals(replay.get(replay.size() - 1).data().getString("id"));
      }, Duration.ofSeconds(20)), "the resumed POST stream ends with the call's response: " + replays);
      List<McpHttpClient.SseEvent> replay = replays.get(replays.size() - 1);
      JsonObject response = replay.get(replay.size() - 1).data();
      assertEquals("slept", response.getJsonObject("result").getJsonObject("structuredContent").getJsonArray("columns")
          .getJsonObject(0).getString("name"), response.encode());
      long previous = SseStream.seqOf(slowSeen);
      for (McpHttpClient.SseEvent e : replay) {
        assertEquals(stream, SseStream.streamOf(e.id()), "only the slow call's own stream: " + replay);
        assertTrue(SseStream.seqOf(e.id()) > previous, "only what came after the last event seen: " + replay);
        previous = SseStream.seqOf(e.id());
        if (e.data().containsKey("method")) {
          assertEquals("slow-progress", e.data().getJsonObject("params").getValue("progressToken"), e.data().encode());
        }
      }

      stop.set(true);
      for (Future<?> w : workers) {
        w.get(60, TimeUnit.SECONDS);
      }
      assertTrue(faults.isEmpty(), done.get() + " parallel calls, " + faults.size() + " went wrong: " + faults.peek());
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
  }
}
