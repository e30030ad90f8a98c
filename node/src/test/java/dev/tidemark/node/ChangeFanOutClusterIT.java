package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.contract.SchemaChangeNotice;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two nodes in one cluster, A running the gateway and the changelog role: a change made with plain
 * SQL reaches the local change address of B, once, whether B runs a gateway or only the query role.
 */
@ExtendWith(InfraExtension.class)
class ChangeFanOutClusterIT {

  static final String DB = "fanout_it";
  static final String NAME = "fanit";

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(b);
    TestNodes.stop(a);
  }

  @Test
  void aPlainSqlChangeAndATableCreationReachTheLocalAddressesOfBothGatewaysOnceEach(SharedInfra infra) throws Exception {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.fan (id int PRIMARY KEY, v int)");
    startPair(infra, "gateway", Map.of());

    BlockingQueue<ChangeNotice> atA = new LinkedBlockingQueue<>();
    BlockingQueue<ChangeNotice> atB = new LinkedBlockingQueue<>();
    BlockingQueue<SchemaChangeNotice> ddlAtA = new LinkedBlockingQueue<>();
    BlockingQueue<SchemaChangeNotice> ddlAtB = new LinkedBlockingQueue<>();
    TestNodes.await(a.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> atA.add(ChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(b.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> atB.add(ChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(a.vertx().eventBus().<JsonObject>localConsumer(Addresses.schemaChanges(NAME), m -> ddlAtA.add(SchemaChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());
    TestNodes.await(b.vertx().eventBus().<JsonObject>localConsumer(Addresses.schemaChanges(NAME), m -> ddlAtB.add(SchemaChangeNotice.fromJson(m.body())))
        .completion().toCompletionStage().toCompletableFuture());

    int id = (int) (System.nanoTime() & 0xffffff);
    sql(infra, DB, "INSERT INTO public.fan VALUES (" + id + ", 1)");
    for (BlockingQueue<ChangeNotice> queue : java.util.List.of(atA, atB)) {
      ChangeNotice notice = next(queue, id);
      assertEquals("public", notice.schema());
      assertEquals("fan", notice.table());
      assertEquals("INSERT", notice.op());
      assertEquals(new JsonArray().add(id), notice.key());
      assertNotNull(notice.position());
    }
    sql(infra, DB, "UPDATE public.fan SET v = 2 WHERE id = " + id);
    assertEquals("UPDATE", next(atA, id).op());
    assertEquals("UPDATE", next(atB, id).op());
    assertNull(atA.poll(300, TimeUnit.MILLISECONDS), "one notice per change on a node, not one per gateway");

    sql(infra, DB, "DROP TABLE IF EXISTS public.fan_new", "CREATE TABLE public.fan_new (id int PRIMARY KEY)");
    for (BlockingQueue<SchemaChangeNotice> queue : java.util.List.of(ddlAtA, ddlAtB)) {
      SchemaChangeNotice ddl;
      do {
        ddl = queue.poll(30, TimeUnit.SECONDS);
        assertNotNull(ddl, "a schema change notice");
      } while (!"CREATE TABLE".equals(ddl.command()));
      assertEquals("fan_new", ddl.object());
    }
  }

  /**
   * get_row selects the columns of the shape the query role cached, kept here for ten minutes, so a
   * column added with plain DDL shows up within the wait only if B's fan-out heard the schema change.
   */
  @Test
  void aColumnAddedByDdlReachesTheReadsOfAQueryOnlyNodeThoughItCachedTheTable(SharedInfra infra) {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.fan_shape",
        "CREATE TABLE public.fan_shape (id int PRIMARY KEY, v int)",
        "INSERT INTO public.fan_shape VALUES (1, 10)",
        "GRANT SELECT ON public.fan_shape TO tidemark_reader");
    startPair(infra, "query", Map.of(ConfigKey.DATABASE_CATALOG_CACHE_MS, "600000"));
    assertEquals(-1, b.httpPort(), "B runs no gateway");

    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      JsonObject key = new JsonObject().put("table", "fan_shape").put("key", 1);
      ToolResults.ok(client, "get_row", key);
      assertFalse(ToolResults.ok(client, "get_row", key).getJsonObject("row").containsKey("added"), "B cached the shape");

      sql(infra, DB, "ALTER TABLE public.fan_shape ADD COLUMN added int DEFAULT 7");
      JsonObject described = ToolResults.ok(client, "describe_table", new JsonObject().put("table", "fan_shape"));
      assertTrue(described.getJsonArray("columns").stream().map(JsonObject.class::cast).anyMatch(c -> c.getString("name").equals("added")),
          "describe_table reads the catalog on every call");
      ChangelogFixtures.await("get_row on B to return the added column", Duration.ofSeconds(30),
          () -> ToolResults.ok(client, "get_row", key).getJsonObject("row").containsKey("added"));
      assertEquals(7, ToolResults.ok(client, "get_row", key).getJsonObject("row").getInteger("added"));
    }
  }

  /** Starts A (gateway and changelog) and B with {@code rolesB}, both serving database {@link #DB} as {@link #NAME}. */
  private void startPair(SharedInfra infra, String rolesB, Map<ConfigKey, String> overridesB) {
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> va = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[0], members, "gateway,changelog");
    va.put(ConfigKey.NODE_ID, "node-a");
    Map<ConfigKey, String> vb = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[1], members, rolesB);
    vb.put(ConfigKey.NODE_ID, "node-b");
    vb.putAll(overridesB);
    a = TestNodes.start(va);
    b = TestNodes.start(vb);
    assertEquals(2, b.clusterSize());
  }

  /** The next notice for row {@code id}, skipping notices of other rows; fails after 30 s. */
  private static ChangeNotice next(BlockingQueue<ChangeNotice> queue, int id) throws InterruptedException {
    while (true) {
      ChangeNotice n = queue.poll(30, TimeUnit.SECONDS);
      assertNotNull(n, "a change notice for row " + id);
      if (n.key() instanceof JsonArray k && k.getInteger(0) == id) {
        return n;
      }
    }
  }
}
