package dev.tidemark.node;

import dev.tidemark.database.Pools;
import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One cluster serving two databases: node 1 runs every role, node 2 only a gateway. Database
 * {@code alpha} is the default ({@code /mcp}), {@code beta} is an entry of {@code databases}; each
 * has its own tables, changelog and topic, and what happens in one never shows in the other.
 */
@ExtendWith(InfraExtension.class)
class MultiDatabaseIT {

  static final String DB_A = "multidb_alpha_it";
  static final String DB_B = "multidb_beta_it";
  static final String ALPHA_ONLY_TOKEN = "tmk_multiDatabaseAlphaOnly000000000000";

  private static TidemarkNode all;
  private static TidemarkNode gatewayOnly;
  private static SharedInfra infra;

  @BeforeAll
  static void start(SharedInfra shared) {
    infra = shared;
    ChangelogFixtures.prepare(infra, DB_A);
    ChangelogFixtures.prepare(infra, DB_B);
    for (String[] db : new String[][] {{DB_A, "alpha_only"}, {DB_B, "beta_only"}}) {
      sql(infra, db[0], "CREATE TABLE IF NOT EXISTS public.ticks (id int PRIMARY KEY, v int)",
          "CREATE TABLE IF NOT EXISTS public." + db[1] + " (id int PRIMARY KEY)",
          "GRANT SELECT, INSERT, UPDATE, DELETE ON public.ticks, public." + db[1] + " TO " + DevSetup.WRITER_ROLE,
          "GRANT SELECT ON public.ticks, public." + db[1] + " TO " + DevSetup.READER_ROLE);
    }
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> first = ChangelogFixtures.config(infra, DB_A, "alpha", cluster, ports[0], members,
        "gateway,query,command,changelog");
    // beta takes its login, password and caller passwords from database.*
    String beta = new JsonArray().add(new JsonObject().put("name", "beta").put("url", infra.postgres().url(DB_B))).encode();
    first.put(ConfigKey.DATABASES, beta);
    first.put(ConfigKey.NODE_ID, "multidb-1");
    Map<ConfigKey, String> second = ChangelogFixtures.config(infra, DB_A, "alpha", cluster, ports[1], members, "gateway");
    second.put(ConfigKey.DATABASES, beta);
    second.put(ConfigKey.NODE_ID, "multidb-2");
    all = TestNodes.startCaughtUp(first);
    ChangelogFixtures.awaitDecoded(infra, DB_B);
    gatewayOnly = TestNodes.start(second);
    putAlphaOnlyToken(first);
  }

  /** A token kept, like every token, in the default database, and bound to alpha alone. */
  private static void putAlphaOnlyToken(Map<ConfigKey, String> config) {
    Vertx vertx = Vertx.vertx();
    try {
      TestNodes.await(TokenStore.create(Pools.create(vertx, TidemarkConfig.from(config).defaultDatabase()))
          .put("it-alpha-only", ALPHA_ONLY_TOKEN, DevSetup.WRITER_ROLE, Access.READ_WRITE, List.of("alpha"))
          .toCompletionStage().toCompletableFuture());
    } finally {
      TestNodes.await(vertx.close().toCompletionStage().toCompletableFuture());
    }
  }

  @AfterAll
  static void stop() {
    TestNodes.stop(gatewayOnly);
    TestNodes.stop(all);
  }

  private static String url(TidemarkNode node, String suffix) {
    return TestNodes.mcpUrl(node) + suffix;
  }

  private static JsonObject structured(McpHttpClient c, String tool, JsonObject args) {
    JsonObject result = c.callTool(tool, args);
    assertNull(result.getValue("isError"), result.encode());
    return result.getJsonObject("structuredContent");
  }

  private static List<String> tables(McpHttpClient c) {
    return structured(c, "list_tables", new JsonObject()).getJsonArray("tables").stream()
        .map(t -> ((JsonObject) t).getString("name")).toList();
  }

  private static List<Integer> changedIds(McpHttpClient c, String cursor) {
    return structured(c, "changes_since", new JsonObject().put("cursor", cursor).put("tables", new JsonArray().add("ticks")))
        .getJsonArray("changes").stream().map(ch -> ((JsonObject) ch).getJsonObject("after").getInteger("id")).toList();
  }

  @Test
  void eachEndpointServesItsOwnDatabaseAndTheBarePathIsTheDefault() {
    try (McpHttpClient bare = new McpHttpClient(url(all, ""), TestNodes.READ_ONLY_TOKEN);
        McpHttpClient alpha = new McpHttpClient(url(all, "/alpha"), TestNodes.READ_ONLY_TOKEN);
        McpHttpClient beta = new McpHttpClient(url(gatewayOnly, "/beta"), TestNodes.READ_ONLY_TOKEN)) {
      bare.initialize();
      alpha.initialize();
      beta.initialize();
      assertEquals("alpha", structured(bare, "status", new JsonObject()).getString("database"));
      assertEquals("alpha", structured(alpha, "status", new JsonObject()).getString("database"));
      assertEquals("beta", structured(beta, "status", new JsonObject()).getString("database"));

      List<String> inAlpha = tables(bare);
      List<String> inBeta = tables(beta);
      assertTrue(inAlpha.contains("alpha_only") && !inAlpha.contains("beta_only"), inAlpha.toString());
      assertTrue(inBeta.contains("beta_only") && !inBeta.contains("alpha_only"), inBeta.toString());
    }
  }

  @Test
  void aChangeInOneDatabaseReachesItsOwnChangesAndSubscribersAndNeverTheOthers() throws Exception {
    int id = (int) (System.nanoTime() & 0xffffff);
    int marker = id + 1;
    try (McpHttpClient alpha = new McpHttpClient(url(all, ""), TestNodes.READ_ONLY_TOKEN);
        McpHttpClient beta = new McpHttpClient(url(gatewayOnly, "/beta"), TestNodes.READ_ONLY_TOKEN)) {
      alpha.initialize();
      beta.initialize();
      // a row is a resource once it exists: both rows in both databases, so that each side may subscribe to both
      for (String db : List.of(DB_A, DB_B)) {
        sql(infra, db, "INSERT INTO public.ticks VALUES (" + id + ", 1), (" + marker + ", 1)");
        ChangelogFixtures.awaitDecoded(infra, db);
      }
      String alphaHead = structured(alpha, "status", new JsonObject()).getString("changelog_head");
      String betaHead = structured(beta, "status", new JsonObject()).getString("changelog_head");
      subscribe(alpha, id);
      // beta subscribes to the same key, and to the marker it changes itself
      subscribe(beta, id);
      subscribe(beta, marker);
      try (SseStream onAlpha = SseStream.open(HttpMethod.GET, url(all, ""), streamHeaders(alpha), null);
          SseStream onBeta = SseStream.open(HttpMethod.GET, url(gatewayOnly, "/beta"), streamHeaders(beta), null)) {
        assertEquals(200, onAlpha.status());
        assertEquals(200, onBeta.status());
        sql(infra, DB_A, "UPDATE public.ticks SET v = 2 WHERE id = " + id);
        JsonObject heard = onAlpha.await("notifications/resources/updated", 15_000);
        assertNotNull(heard, "alpha's subscriber hears alpha's change");
        assertEquals("tidemark://row/ticks/" + id, heard.getJsonObject("params").getString("uri"));

        // committed after alpha's change and announced after it: had alpha's change reached beta, it would come first
        sql(infra, DB_B, "UPDATE public.ticks SET v = 2 WHERE id = " + marker);
        JsonObject first = onBeta.await("notifications/resources/updated", 15_000);
        assertNotNull(first, "beta's subscriber hears beta's change");
        assertEquals("tidemark://row/ticks/" + marker, first.getJsonObject("params").getString("uri"),
            "the first thing beta's subscriber hears is beta's own change, not alpha's");
      }
      ChangelogFixtures.awaitDecoded(infra, DB_A);
      ChangelogFixtures.awaitDecoded(infra, DB_B);
      assertEquals(List.of(id), changedIds(alpha, alphaHead), "alpha's changelog holds alpha's change alone");
      assertEquals(List.of(marker), changedIds(beta, betaHead), "beta's changelog holds beta's change alone");
    }
  }

  @Test
  void aTokenBoundToOneDatabaseReachesNoOtherAndAnUnknownDatabaseIsNotFound() {
    try (McpHttpClient alpha = new McpHttpClient(url(all, "/alpha"), ALPHA_ONLY_TOKEN);
        McpHttpClient bare = new McpHttpClient(url(gatewayOnly, ""), ALPHA_ONLY_TOKEN);
        McpHttpClient beta = new McpHttpClient(url(all, "/beta"), ALPHA_ONLY_TOKEN);
        McpHttpClient unknown = new McpHttpClient(url(all, "/gamma"), TestNodes.READ_ONLY_TOKEN)) {
      alpha.initialize();
      bare.initialize();
      assertEquals("alpha", structured(bare, "status", new JsonObject()).getString("database"));
      McpHttpClient.Reply refused = beta.post(initialize(beta));
      assertEquals(403, refused.status(), refused.body());
      assertTrue(refused.body().contains("This token may not reach this database."), refused.body());

      McpHttpClient.Reply missing = unknown.post(initialize(unknown));
      assertEquals(404, missing.status(), missing.body());
      assertTrue(missing.body().contains("/mcp (alpha), /mcp/alpha, /mcp/beta"), missing.body());
      assertFalse(missing.body().contains("gamma"), "a refusal never echoes the path it was sent");
    }
  }

  @Test
  void aConsumerOfOneNameInEachDatabaseIsGivenItsOwnDatabasesEventsAlone() {
    int id = (int) (System.nanoTime() & 0xffffff) | 0x1000000;
    int marker = id + 1;
    try (McpHttpClient alpha = new McpHttpClient(url(all, ""), TestNodes.READ_ONLY_TOKEN);
        McpHttpClient beta = new McpHttpClient(url(gatewayOnly, "/beta"), TestNodes.READ_ONLY_TOKEN)) {
      alpha.initialize();
      beta.initialize();
      JsonObject args = Events.next("multidb-worker", "ticks", 10);
      assertTrue(ToolResults.ok(alpha, "events_next", args.copy().put("wait_ms", 0)).getBoolean("created"));
      assertTrue(ToolResults.ok(beta, "events_next", args.copy().put("wait_ms", 0)).getBoolean("created"),
          "the same name in beta is a consumer of its own");
      sql(infra, DB_A, "INSERT INTO public.ticks VALUES (" + id + ", 1)");
      sql(infra, DB_B, "INSERT INTO public.ticks VALUES (" + marker + ", 1)");
      assertEquals(List.of(id), leaseUntil(alpha, args, id), "alpha's consumer is given alpha's change");
      assertEquals(List.of(marker), leaseUntil(beta, args, marker), "beta's consumer is given beta's change, and never alpha's");
    }
  }

  /** The keys of ticks' events leased (and acknowledged) until one of row {@code last} came. */
  private static List<Integer> leaseUntil(McpHttpClient c, JsonObject args, int last) {
    List<Integer> seen = new java.util.ArrayList<>();
    ChangelogFixtures.await("an event of row " + last, java.time.Duration.ofSeconds(30), () -> {
      for (Object o : ToolResults.ok(c, "events_next", args).getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        seen.add(Events.keyOf(e));
        ToolResults.ok(c, "events_ack", Events.ackArgs(args.getString("consumer"), e));
      }
      return seen.contains(last);
    });
    return seen;
  }

  @Test
  void migrateAndDoctorCoverEveryDatabaseOfTheList(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path config = dir.resolve("tidemark.yaml");
    java.nio.file.Files.writeString(config, """
        database:
          name: alpha
          url: %s
          user: %s
          password: %s
        databases:
          - name: beta
            url: %s
        """.formatted(infra.postgres().url(DB_A), infra.postgres().user(), infra.postgres().password(), infra.postgres().url(DB_B)));
    Cli.Run migrated = Cli.run("migrate", "--config", config.toString());
    assertEquals(0, migrated.code(), migrated.err());
    assertTrue(migrated.out().contains("database alpha: Tidemark schema is at version")
        && migrated.out().contains("database beta: Tidemark schema is at version"), migrated.out());
    Cli.Run doctor = Cli.run("doctor", "--roles", "query", "--config", config.toString());
    for (String line : List.of("ok   postgres: ", "ok   schema: ", "ok   postgres beta: ", "ok   schema beta: ")) {
      assertTrue(doctor.out().contains(line), line + " in " + doctor.out());
    }
  }

  private static void subscribe(McpHttpClient c, int id) {
    JsonObject answer = c.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://row/ticks/" + id));
    assertEquals(new JsonObject(), answer.getJsonObject("result"), answer.encode());
  }

  private static JsonObject initialize(McpHttpClient c) {
    return c.request("initialize", new JsonObject().put("protocolVersion", McpHttpClient.PROTOCOL_VERSION)
        .put("capabilities", new JsonObject()).put("clientInfo", new JsonObject().put("name", "it").put("version", "1")));
  }

  private static MultiMap streamHeaders(McpHttpClient c) {
    return MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN)
        .add("Accept", "text/event-stream")
        .add("Mcp-Session-Id", c.sessionId())
        .add("MCP-Protocol-Version", McpHttpClient.PROTOCOL_VERSION);
  }
}
