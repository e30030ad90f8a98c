package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.Revocation;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.database.Pools;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A token revoked with the CLI, which talks to PostgreSQL only, ends what its caller holds open on
 * every gateway within a second: streams, calls in flight and sessions; other callers keep theirs.
 */
@ExtendWith(InfraExtension.class)
class TokenRevocationClusterIT {

  private static final Duration WITHIN = Duration.ofSeconds(1);

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(a);
    TestNodes.stop(b);
  }

  private void startBoth(SharedInfra infra) {
    TidemarkNode[] pair = TestNodes.startGatewayPair(infra);
    a = pair[0];
    b = pair[1];
  }

  private static Path configFile(SharedInfra infra, Path dir) throws Exception {
    return TestNodes.cliConfig(infra, dir);
  }

  private static String createToken(Path config, String name) {
    Cli.Run created = Cli.run("token", "create", "--name", name, "--role", "tidemark_reader", "--read-only", "--config", config.toString());
    assertEquals(0, created.code(), created.err());
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    return m.group(1);
  }

  private static MultiMap getStreamHeaders(String token, String sessionId) {
    return MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + token)
        .add("Accept", "text/event-stream")
        .add("Mcp-Session-Id", sessionId)
        .add("MCP-Protocol-Version", "2025-11-25");
  }

  private static MultiMap listenHeaders(String token) {
    return MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + token)
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("MCP-Protocol-Version", "2026-07-28")
        .add("Mcp-Method", "subscriptions/listen");
  }

  private static JsonObject listenRequest() {
    return new JsonObject().put("jsonrpc", "2.0").put("id", "sub-1").put("method", "subscriptions/listen")
        .put("params", new JsonObject()
            .put("notifications", new JsonObject().put("resourcesListChanged", true))
            .put("_meta", new JsonObject()
                .put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
                .put("io.modelcontextprotocol/clientCapabilities", new JsonObject())
                .put("io.modelcontextprotocol/clientInfo", new JsonObject().put("name", "revocation-it").put("version", "1"))));
  }

  private static SseStream openGetStream(String url, String token, String sessionId) {
    SseStream s = SseStream.open(HttpMethod.GET, url, getStreamHeaders(token, sessionId), null);
    assertEquals(200, s.status());
    return s;
  }

  private static SseStream openListen(String url, String token) throws InterruptedException {
    SseStream s = SseStream.open(HttpMethod.POST, url, listenHeaders(token), listenRequest().toBuffer());
    assertEquals(200, s.status());
    assertNotNull(s.await("notifications/subscriptions/acknowledged", 10_000), "the listen stream is open");
    return s;
  }

  @Test
  void revokingATokenWithTheCliEndsItsStreamsCallsAndSessionsOnEveryGatewayWithinASecond(SharedInfra infra, @TempDir Path dir)
      throws Exception {
    startBoth(infra);
    Path config = configFile(infra, dir);
    String name = "it-revoke-" + UUID.randomUUID().toString().substring(0, 8);
    String token = createToken(config, name);
    String urlA = TestNodes.mcpUrl(a);
    String urlB = TestNodes.mcpUrl(b);

    try (McpHttpClient onA = new McpHttpClient(urlA, token);
         McpHttpClient onB = new McpHttpClient(urlB, token);
         McpHttpClient other = new McpHttpClient(urlA, TestNodes.READ_ONLY_TOKEN)) {
      onA.initialize();
      onB.initialize();
      other.initialize();
      SseStream getA = openGetStream(urlA, token, onA.sessionId());
      SseStream listenA = openListen(urlA, token);
      // a call in flight on A, run by the query service on B: its answer is an event stream already open
      // (a progress token asks for one; without it the answer would be one JSON body at the end)
      JsonObject sleep = new JsonObject().put("jsonrpc", "2.0").put("id", 7).put("method", "tools/call")
          .put("params", new JsonObject().put("name", "query").put("arguments", new JsonObject().put("sql", "SELECT pg_sleep(4)"))
              .put("_meta", new JsonObject().put("progressToken", "revoke-7")));
      MultiMap callHeaders = getStreamHeaders(token, onA.sessionId()).add("Content-Type", "application/json");
      SseStream callA = SseStream.open(HttpMethod.POST, urlA, callHeaders, sleep.toBuffer());
      assertEquals(200, callA.status());
      SseStream otherGet = openGetStream(urlA, TestNodes.READ_ONLY_TOKEN, other.sessionId());
      SseStream otherListen = openListen(urlA, TestNodes.READ_ONLY_TOKEN);
      assertEquals(200, onB.post(onB.request("ping", null)).status(), "the token works on B, and B has it cached");
      assertEquals(200, onA.post(onA.request("ping", null)).status(), "and on A");

      Cli.Run revoked = Cli.run("token", "revoke", "--name", name, "--config", config.toString());
      assertEquals(0, revoked.code(), revoked.err());
      long revokedAt = System.nanoTime();

      assertTrue(Await.until(() -> getA.ended() && listenA.ended() && callA.ended(), WITHIN),
          "the GET stream, the listen stream and the call in flight on A end within a second"
              + " (get " + getA.ended() + ", listen " + listenA.ended() + ", call " + callA.ended() + ")");
      long endedMillis = (System.nanoTime() - revokedAt) / 1_000_000;
      JsonObject callEnd = callA.await("response", 1_000);
      assertNotNull(callEnd, "the call in flight ends with an error, not silently");
      assertEquals(-32600, callEnd.getJsonObject("error").getInteger("code"));
      assertTrue(callEnd.getJsonObject("error").getString("message").contains("revoked"), callEnd.encode());
      JsonObject listenEnd = listenA.await("response", 1_000);
      assertNotNull(listenEnd, "the listen stream ends with an error response");
      assertEquals("sub-1", listenEnd.getString("id"));
      assertEquals(-32600, listenEnd.getJsonObject("error").getInteger("code"));

      // one attempt each, no retry: every gateway refuses the token by now, B although it had it cached
      assertEquals(401, onB.post(onB.request("ping", null)).status(), "B refuses the token");
      assertEquals(401, onA.post(onA.request("ping", null)).status(), "A refuses the token");
      assertTrue((System.nanoTime() - revokedAt) / 1_000_000 < 2_000 + endedMillis, "the refusals came at once");

      assertFalse(otherGet.ended(), "another caller's GET stream stays open");
      assertFalse(otherListen.ended(), "another caller's listen stream stays open");
      assertEquals(200, other.post(other.request("ping", null)).status(), "another caller keeps working");

      // the name made again gives a new token under the same caller id: the old sessions stay ended
      String again = createToken(config, name);
      McpHttpClient sameSessionOnB = new McpHttpClient(urlB, again);
      try (sameSessionOnB) {
        onB.withToken(again);
        assertEquals(404, onB.post(onB.request("ping", null)).status(), "a session opened before the revocation is gone on B");
        onA.withToken(again);
        assertEquals(404, onA.post(onA.request("ping", null)).status(), "and on A");
        sameSessionOnB.initialize();
        assertEquals(200, sameSessionOnB.post(sameSessionOnB.request("ping", null)).status(), "a new session works");
      }
      Cli.run("token", "revoke", "--name", name, "--config", config.toString());
      getA.close();
      listenA.close();
      callA.close();
      otherGet.close();
      otherListen.close();
    }
  }

  /**
   * A token made again under its name keeps the caller id, and the old token's end is announced
   * like a revocation: a gateway that hears that notice while it checks, or holds, the new token
   * must tell the two apart. The new token's lookup says since when it is valid, by the same
   * reading of the same column the revocation carries, and only a later revocation ends it.
   */
  @Test
  void aTokenMadeAgainIsValidSinceTheNoticeThatEndedTheOldOneAndOnlyALaterRevocationEndsIt(SharedInfra infra) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      var db = TidemarkConfig.from(TestNodes.config(infra, "tokens", 0, "", "query")).database();
      Pool pool = Pools.create(vertx, db);
      TokenStore store = TokenStore.create(pool);
      Authenticator auth = store.authenticator(vertx, Pools.connectOptions(db));
      BlockingQueue<Revocation> heard = new LinkedBlockingQueue<>();
      TestNodes.await(auth.start(heard::add).toCompletionStage().toCompletableFuture());
      String name = "it-remade-" + UUID.randomUUID().toString().substring(0, 8);
      String first = "tmk_first_" + UUID.randomUUID();
      String again = "tmk_again_" + UUID.randomUUID();
      String id = TestNodes.await(store.put(name, first, "tidemark_reader", Access.READ_ONLY, List.of("*")).toCompletionStage().toCompletableFuture());
      Caller before = TestNodes.await(auth.authenticate("Bearer " + first).toCompletionStage().toCompletableFuture());
      assertEquals(0L, before.validSince(), "a token that replaced none");

      TestNodes.await(store.put(name, again, "tidemark_reader", Access.READ_ONLY, List.of("*")).toCompletionStage().toCompletableFuture());
      Revocation remade = next(heard, id);
      assertNotNull(remade, "making the name again announces the old token's end");
      Caller after = TestNodes.await(auth.authenticate("Bearer " + again).toCompletionStage().toCompletableFuture());
      assertEquals(id, after.id(), "the same caller id");
      assertEquals(remade.atMillis(), after.validSince(), "valid since the notice that ended the old token");
      assertTrue(before.revokedBy(remade.atMillis()), "the notice ends the old token");
      assertFalse(after.revokedBy(remade.atMillis()), "and not the new one");

      TestNodes.await(store.revoke(name).toCompletionStage().toCompletableFuture());
      Revocation revoked = next(heard, id);
      assertNotNull(revoked, "the revocation is heard");
      assertTrue(after.revokedBy(revoked.atMillis()), "the new token's own revocation ends it");
      TestNodes.await(auth.stop().toCompletionStage().toCompletableFuture());
    } finally {
      TestNodes.await(vertx.close().toCompletionStage().toCompletableFuture());
    }
  }

  /** The next revocation of caller {@code id} heard within 10 s, past those of other tests' callers (the watcher's first poll looks back). */
  private static Revocation next(BlockingQueue<Revocation> heard, String id) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (Revocation r; (r = heard.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS)) != null; ) {
      if (r.callerId().equals(id)) {
        return r;
      }
    }
    return null;
  }

  @Test
  void aRevocationWhoseNoticeWasLostIsFoundByThePollWithinTwoSeconds(SharedInfra infra, @TempDir Path dir) throws Exception {
    startBoth(infra);
    Path config = configFile(infra, dir);
    String name = "it-revoke-" + UUID.randomUUID().toString().substring(0, 8);
    String token = createToken(config, name);
    try (McpHttpClient onA = new McpHttpClient(TestNodes.mcpUrl(a), token)) {
      onA.initialize();
      SseStream getA = openGetStream(TestNodes.mcpUrl(a), token, onA.sessionId());
      try (Connection conn = TestNodes.jdbc(infra)) {
        // with triggers off nothing is notified: only the poll of invalidated_at can find it
        conn.createStatement().execute("SET session_replication_role = replica");
        conn.createStatement().execute("UPDATE tidemark.api_token SET revoked_at = now(), invalidated_at = clock_timestamp() "
            + "WHERE name = '" + name + "'");
      }
      assertTrue(Await.until(getA::ended, Duration.ofSeconds(2)), "the poll finds the revocation");
      assertEquals(401, onA.post(onA.request("ping", null)).status());
      getA.close();
    }
  }
}
