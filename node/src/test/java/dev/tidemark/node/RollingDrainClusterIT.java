package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A rolling restart of a three-node cluster under load: each node in turn drains and stops as on
 * SIGTERM ({@link TidemarkNode#stop()}, what the shutdown hook runs) and a new node takes its place,
 * while clients keep making changes with idempotency keys and send again whatever got a retriable
 * answer, to another gateway. No change is lost and none is made twice.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RollingDrainClusterIT {

  static final String DB = "rolling_drain_cluster_it";
  static final int LOADERS = 3;
  /** The third node's drain gives up quickly, so that the test sees a call cut at the timeout. */
  static final long SHORT_DRAIN_MS = 1500;

  private SharedInfra infra;
  private String cluster;
  private int[] ports;
  private String members;
  private final TidemarkNode[] nodes = new TidemarkNode[3];
  /** The gateways clients use; a restarted node's replaces the old one's once it runs. */
  private final List<String> urls = new CopyOnWriteArrayList<>();
  private final AtomicInteger draining = new AtomicInteger();
  private final AtomicReference<McpHttpClient.Reply> refusal = new AtomicReference<>();
  private final Queue<String> failures = new ConcurrentLinkedQueue<>();
  private volatile boolean loading = true;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.roll_event, public.roll_lock",
        "CREATE TABLE public.roll_event (id bigserial PRIMARY KEY, name text NOT NULL)",
        "CREATE TABLE public.roll_lock (id int PRIMARY KEY)",
        "INSERT INTO public.roll_lock VALUES (1)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.roll_event, public.roll_lock TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    cluster = TestNodes.clusterName();
    ports = FreePorts.allocate(3);
    members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1] + ",127.0.0.1:" + ports[2];
    // side by side: a member alone waits for the others it was told of before it forms the cluster
    List<CompletableFuture<TidemarkNode>> starting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int n = i;
      starting.add(CompletableFuture.supplyAsync(() -> startNode(n, "node-" + n)));
    }
    for (int i = 0; i < 3; i++) {
      nodes[i] = starting.get(i).join();
      urls.add(TestNodes.mcpUrl(nodes[i]));
    }
    assertEquals(3, nodes[2].clusterSize());
  }

  private TidemarkNode startNode(int i, String id) {
    Map<ConfigKey, String> v = TestNodes.config(infra, cluster, ports[i], members, "gateway,query,command");
    v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    v.put(ConfigKey.NODE_ID, id);
    // a call waits on a lock the test holds; it must not time out first
    v.put(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "30000");
    v.put(ConfigKey.NODE_DRAIN_TIMEOUT_MS, i == 2 ? String.valueOf(SHORT_DRAIN_MS) : "20000");
    return TestNodes.start(v);
  }

  @AfterAll
  void stop() {
    loading = false;
    for (TidemarkNode n : nodes) {
      TestNodes.stop(n);
    }
  }

  @Test
  void aRollingRestartUnderLoadLosesNoCallAndMakesNoChangeTwice() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(LOADERS + 1);
    List<Future<List<String>>> loaders = new ArrayList<>();
    try {
      for (int l = 0; l < LOADERS; l++) {
        int loader = l;
        loaders.add(pool.submit(() -> load(loader)));
      }
      assertTrue(Await.until(() -> committed() >= 10, Duration.ofSeconds(30)), () -> "the load runs before the roll: " + failures);

      // node 0: a call waits on a lock while the node drains; the drain waits for it, and it is answered
      rollWhileACallWaits(pool, 0, true);
      // node 1: a plain roll under load
      roll(1);
      // node 2: the call still waits when its short drain timeout passes; it is cut with a retriable error
      rollWhileACallWaits(pool, 2, false);

      int before = committed();
      assertTrue(Await.until(() -> committed() >= before + 10, Duration.ofSeconds(30)), () -> "the load goes on after the roll: " + failures);
    } finally {
      loading = false;
    }
    List<String> made = new ArrayList<>();
    for (Future<List<String>> f : loaders) {
      made.addAll(f.get(60, TimeUnit.SECONDS));
    }
    pool.shutdownNow();
    assertTrue(failures.isEmpty(), "no call failed for good: " + failures);
    assertTrue(draining.get() > 0, "a draining gateway refused some calls, which were sent again elsewhere");

    McpHttpClient.Reply refused = refusal.get();
    assertEquals(503, refused.status());
    assertEquals("1", refused.headers().get("Retry-After"));
    assertEquals("close", refused.headers().get("Connection"));
    JsonObject error = refused.json().getJsonObject("error");
    assertEquals(-32010, error.getInteger("code"));
    assertTrue(error.getString("message").contains("draining"), error::encode);
    assertEquals(1, error.getJsonObject("data").getInteger("retryAfterSeconds"));

    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet rs = c.createStatement().executeQuery(
        "SELECT count(*), count(DISTINCT name) FROM public.roll_event")) {
      rs.next();
      assertEquals(made.size(), rs.getInt(1), "every change a client made is there, and nothing else");
      assertEquals(made.size(), rs.getInt(2), "no change was made twice");
    }
    System.out.println("rolled 3 nodes under load: " + made.size() + " changes, " + draining.get() + " refusals by draining gateways");
  }

  private final AtomicInteger committedCount = new AtomicInteger();

  private int committed() {
    return committedCount.get();
  }

  /** One client: plans and commits changes until the test ends, each with its own idempotency key. */
  private List<String> load(int loader) {
    List<String> made = new ArrayList<>();
    try (McpHttpClient client = new McpHttpClient(urls.get(loader % urls.size()), TestNodes.READ_WRITE_TOKEN)) {
      client.initialize();
      int[] cursor = {loader};
      for (int n = 0; loading; n++) {
        String name = "roll-" + loader + "-" + n;
        JsonObject args = new JsonObject().put("table", "roll_event").put("rows", new JsonArray().add(new JsonObject().put("name", name)));
        JsonObject plan = call(client, cursor, args);
        if (plan == null) {
          return made;
        }
        JsonObject outcome = call(client, cursor, args.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", name));
        if (outcome == null) {
          return made;
        }
        if (outcome.getJsonObject("totals").getInteger("inserted") != 1) {
          failures.add(name + ": " + outcome.encode());
        }
        made.add(name);
        committedCount.incrementAndGet();
      }
    } catch (RuntimeException e) {
      failures.add("loader " + loader + ": " + e);
    }
    return made;
  }

  /**
   * insert_rows, sent again to the next gateway after any retriable answer: a refusal by a draining
   * gateway, a closed connection, a retriable tool error. Null when it failed for good (noted).
   */
  private JsonObject call(McpHttpClient client, int[] cursor, JsonObject args) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
    String last = "";
    while (System.nanoTime() < deadline) {
      List<String> live = urls;
      client.at(live.get(Math.floorMod(cursor[0], live.size())));
      try {
        McpHttpClient.Reply reply = client.post(client.request("tools/call",
            new JsonObject().put("name", "insert_rows").put("arguments", args)));
        if (reply.status() == 503) {
          JsonObject error = reply.json().getJsonObject("error");
          if (error != null && error.getInteger("code") == -32010) {
            draining.incrementAndGet();
            refusal.compareAndSet(null, reply);
          }
          last = reply.body();
        } else if (reply.status() != 200) {
          failures.add(args.encode() + " answered " + reply.status() + ": " + reply.body());
          return null;
        } else {
          JsonObject message = reply.json();
          JsonObject result = message.getJsonObject("result");
          if (result == null) {
            failures.add(args.encode() + ": " + message.encode());
            return null;
          }
          JsonObject content = result.getJsonObject("structuredContent");
          if (!Boolean.TRUE.equals(result.getBoolean("isError"))) {
            // the next call goes to the next gateway, so every gateway, the draining one too, has traffic
            cursor[0]++;
            return content;
          }
          if (!content.getJsonObject("error").getBoolean("retriable")) {
            failures.add(args.encode() + ": " + content.encode());
            return null;
          }
          last = content.encode();
        }
      } catch (RuntimeException e) {
        last = e.toString(); // the gateway went away mid-request or refused the connection
      }
      cursor[0]++;
    }
    failures.add(args.encode() + " never succeeded; last: " + last);
    return null;
  }

  /** Stops node {@code i} as SIGTERM would, then starts a new node in its place. */
  private void roll(int i) {
    TestNodes.await(nodes[i].stop().toCompletionStage().toCompletableFuture());
    replace(i);
  }

  private void replace(int i) {
    String old = TestNodes.mcpUrl(nodes[i]);
    nodes[i] = startNode(i, "node-" + i + "-restarted");
    urls.set(urls.indexOf(old), TestNodes.mcpUrl(nodes[i]));
  }

  /**
   * Holds a lock that a read on node {@code i} waits for, and a GET stream open there, then stops the
   * node. While it drains, it is not ready and refuses new calls; the GET stream ends with an id and
   * {@code retry:} to resume from. The lock is let go before the drain timeout when {@code finishes}.
   */
  private void rollWhileACallWaits(ExecutorService pool, int i, boolean finishes) throws Exception {
    TidemarkNode node = nodes[i];
    String url = TestNodes.mcpUrl(node);
    try (Connection lock = ChangelogFixtures.jdbc(infra, DB);
         McpHttpClient slow = new McpHttpClient(url, TestNodes.READ_WRITE_TOKEN)) {
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE public.roll_lock IN ACCESS EXCLUSIVE MODE");
      slow.initialize();
      Future<McpHttpClient.Reply> waiting = pool.submit(() -> slow.post(slow.request("tools/call",
          new JsonObject().put("name", "list_rows").put("arguments", new JsonObject().put("table", "roll_lock")))));
      assertTrue(Await.until(() -> waitsOnLock() > 0, Duration.ofSeconds(20)), "the read waits on the lock");
      SseStream stream = SseStream.open(HttpMethod.GET, url, MultiMap.caseInsensitiveMultiMap()
          .add("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN).add("Accept", "text/event-stream")
          .add("Mcp-Session-Id", slow.sessionId()).add("MCP-Protocol-Version", McpHttpClient.PROTOCOL_VERSION), null);
      assertEquals(200, stream.status());
      JsonObject listen = new JsonObject().put("jsonrpc", "2.0").put("id", 42).put("method", "subscriptions/listen")
          .put("params", new JsonObject().put("_meta", new JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
              .put("io.modelcontextprotocol/clientCapabilities", new JsonObject()))
              .put("notifications", new JsonObject().put("resourcesListChanged", true)));
      SseStream listening = SseStream.open(HttpMethod.POST, url, MultiMap.caseInsensitiveMultiMap()
          .add("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN).add("Content-Type", "application/json")
          .add("Accept", "text/event-stream").add("MCP-Protocol-Version", "2026-07-28").add("Mcp-Method", "subscriptions/listen"),
          listen.toBuffer());
      assertEquals("notifications/subscriptions/acknowledged", listening.next(10_000).data().getString("method"));

      int refusedBefore = draining.get();
      CompletableFuture<Void> stopped = node.stop().toCompletionStage().toCompletableFuture();
      assertTrue(Await.until(() -> readiness(node).contains("draining"), Duration.ofSeconds(10)), "readiness goes down first");
      assertTrue(readiness(node).startsWith("503 "), readiness(node));
      assertTrue(Await.until(stream::ended, Duration.ofSeconds(10)), "the GET stream ends at once");
      assertTrue(stream.text().matches("(?s).*id: g-\\d+\nretry: \\d+\ndata: \n\n$"), "it ends with an id and a retry hint: " + stream.text());
      stream.close();
      JsonObject ended = listening.await("response", 10_000);
      assertEquals(-32010, ended.getJsonObject("error").getInteger("code"), "the listen stream ends with the drain's error: " + ended);
      assertTrue(listening.text().contains("retry: "), listening.text());
      listening.close();
      HttpResponse<String> get = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build().send(HttpRequest.newBuilder(URI.create(url))
          .header("Authorization", "Bearer " + TestNodes.READ_WRITE_TOKEN).header("Accept", "text/event-stream")
          .header("Mcp-Session-Id", slow.sessionId()).header("MCP-Protocol-Version", McpHttpClient.PROTOCOL_VERSION)
          .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(503, get.statusCode(), "a new GET stream is refused: " + get.body());
      assertEquals("1", get.headers().firstValue("Retry-After").orElse(null));
      assertEquals(-32010, new JsonObject(get.body()).getJsonObject("error").getInteger("code"));
      if (finishes) {
        assertTrue(Await.until(() -> draining.get() > refusedBefore, Duration.ofSeconds(15)), "new calls are refused meanwhile");
        assertTrue(!waiting.isDone() && !stopped.isDone(), "the drain waits for the call in flight");
        lock.commit();
        McpHttpClient.Reply answered = waiting.get(30, TimeUnit.SECONDS);
        assertEquals(200, answered.status(), answered.body());
        assertNotNull(answered.json().getJsonObject("result").getJsonObject("structuredContent").getJsonArray("rows"),
            answered.body());
      } else {
        McpHttpClient.Reply cut = waiting.get(30, TimeUnit.SECONDS);
        assertEquals(503, cut.status(), cut.body());
        JsonObject error = cut.json().getJsonObject("error");
        assertEquals(-32010, error.getInteger("code"), cut.body());
        assertTrue(error.getString("message").contains("idempotency_key"), cut.body());
        lock.commit();
      }
      stopped.get(40, TimeUnit.SECONDS);
    }
    replace(i);
  }

  private int waitsOnLock() {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet rs = c.createStatement().executeQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%roll_lock%'")) {
      rs.next();
      return rs.getInt(1);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** "status body" of the node's /health/ready. */
  private static String readiness(TidemarkNode node) {
    try {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + node.opsPort() + "/health/ready")).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString());
      return r.statusCode() + " " + r.body();
    } catch (Exception e) {
      return "unreachable " + e;
    }
  }
}
