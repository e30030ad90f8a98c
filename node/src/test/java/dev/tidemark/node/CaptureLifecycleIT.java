package dev.tidemark.node;

import dev.tidemark.database.Pools;
import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The capture's own parts over their life: a bulk transaction, a slot that is lost, a server that
 * lacks what decoding needs, and the uninstall that leaves the database as it was.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CaptureLifecycleIT {

  static final String DB = "capture_lifecycle_it";
  static final String NAME = "lifecycle";

  private SharedInfra infra;
  private TidemarkNode server;
  private TidemarkNode relay;

  @BeforeAll
  void start(SharedInfra shared) {
    // a server of its own: the million-row update's WAL would otherwise hold every other test's slot back
    this.infra = SharedInfra.withOwnPostgres(shared);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.l (id int PRIMARY KEY, v int NOT NULL)");
    server = TestNodes.startAlone(infra, "gateway,query", Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DB),
        ConfigKey.DATABASE_NAME, NAME));
    relay = startRelay(Map.of());
  }

  @AfterAll
  void stop() {
    TestNodes.stop(relay);
    TestNodes.stop(server);
    infra.closeOwn();
  }

  private TidemarkNode startRelay(Map<ConfigKey, String> overrides) {
    return ChangelogFixtures.startRelay(infra, DB, NAME, overrides);
  }

  private long count(String sql) throws Exception {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    }
  }

  @Test
  @Order(1)
  void aMillionRowUpdateInOneTransactionIsStoredInBoundedBatches() throws Exception {
    // filled outside the served schemas, so that only the update is decoded
    sql(infra, DB, "CREATE SCHEMA IF NOT EXISTS staging", "DROP TABLE IF EXISTS staging.big, public.big",
        "CREATE TABLE staging.big (id int PRIMARY KEY, n int NOT NULL, pad text NOT NULL)",
        "INSERT INTO staging.big SELECT g, 0, repeat('x', 100) FROM generate_series(1, 1000000) g",
        "ALTER TABLE staging.big SET SCHEMA public");
    ChangelogFixtures.await("public.big in the publication", Duration.ofSeconds(60), () -> {
      try {
        return count("SELECT count(*) FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid"
            + " WHERE c.relname = 'big' AND t.published") == 1;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    sql(infra, DB, "UPDATE public.big SET n = 1");
    ChangelogFixtures.awaitDecoded(infra, DB);
    assertEquals(1_000_000, count("SELECT count(*) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'"
        + " AND (before->>'n')::int = 0 AND (after->>'n')::int = 1 AND after->>'pad' = repeat('x', 100)"));
    assertEquals(1, count("SELECT count(DISTINCT xid) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'"), "one transaction");
    // the relay held at most changelog.relay-batch-size (1000) decoded changes: it stored them in that many transactions of its own
    long stores = count("SELECT count(DISTINCT xmin::text) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'");
    assertTrue(stores >= 1_000, "stored in " + stores + " transactions");
    sql(infra, DB, "DROP TABLE public.big");
  }

  @Test
  @Order(2)
  void aLostSlotIsReplacedAndEveryCursorFromBeforeIsExpired() throws Exception {
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(server), TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      sql(infra, DB, "INSERT INTO public.l VALUES (1, 1)");
      ChangelogFixtures.awaitDecoded(infra, DB);
      String old = c.callTool("status", new JsonObject()).getJsonObject("structuredContent").getString("changelog_head");
      TestNodes.stop(relay);
      relay = null;
      // the server loses the slot (dropped, or invalidated past max_slot_wal_keep_size) with a change in it
      sql(infra, DB, "UPDATE public.l SET v = 2 WHERE id = 1",
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = current_database()");
      relay = startRelay(Map.of());
      ChangelogFixtures.await("a new slot", Duration.ofSeconds(60), () -> {
        try {
          return count("SELECT count(*) FROM pg_replication_slots WHERE database = current_database() AND active") == 1;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      JsonObject r = c.callTool("changes_since", new JsonObject().put("cursor", old));
      assertEquals("CURSOR_EXPIRED", r.getJsonObject("structuredContent").getJsonObject("error").getString("code"), r::encode);
      String fresh = c.callTool("status", new JsonObject()).getJsonObject("structuredContent").getString("changelog_head");
      sql(infra, DB, "UPDATE public.l SET v = 3 WHERE id = 1");
      ChangelogFixtures.awaitDecoded(infra, DB);
      JsonObject again = c.callTool("changes_since", new JsonObject().put("cursor", fresh)).getJsonObject("structuredContent");
      assertEquals(1, again.getJsonArray("changes").size(), again::encode);
      assertEquals(3, again.getJsonArray("changes").getJsonObject(0).getJsonObject("after").getInteger("v"));
    }
  }

  @Test
  @Order(3)
  void aLoginWithoutTheReplicationRightStopsTheNodeAtStartNamingIt() {
    sql(infra, DB, "DROP ROLE IF EXISTS lifecycle_norepl", "CREATE ROLE lifecycle_norepl LOGIN PASSWORD 'pw' NOREPLICATION");
    Map<ConfigKey, String> v = ChangelogFixtures.config(infra, DB, NAME, TestNodes.clusterName(), FreePorts.allocate(), "", "changelog");
    v.put(ConfigKey.DATABASE_USER, "lifecycle_norepl");
    v.put(ConfigKey.DATABASE_PASSWORD, "pw");
    Throwable failed = assertThrows(Throwable.class, () -> TestNodes.start(v));
    Throwable root = failed;
    while (root.getCause() != null && !(root instanceof IllegalStateException)) {
      root = root.getCause();
    }
    assertTrue(root.getMessage().contains("lifecycle_norepl has neither REPLICATION nor superuser")
        && root.getMessage().contains("ALTER ROLE lifecycle_norepl REPLICATION"), root.getMessage());
  }

  @Test
  @Order(4)
  void uninstallRemovesSlotPublicationTriggersAndSchemaAndPutsBackTheReplicaIdentity() throws Exception {
    assertEquals("f", identity("l"));
    TestNodes.stop(relay);
    relay = null;
    TestNodes.stop(server);
    server = null;
    Vertx vertx = Vertx.vertx();
    try {
      Map<ConfigKey, String> v = TestNodes.config(infra, "uninstall", 0, "", "query");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
      var pool = Pools.create(vertx, TidemarkConfig.from(v).database());
      CaptureSetup.uninstall(pool).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assertEquals(0, count("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
    assertEquals(0, count("SELECT count(*) FROM pg_publication"));
    assertEquals(0, count("SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));
    assertEquals(0, count("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tidemark%'"));
    assertEquals(0, count("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'tidemark%'"));
    assertEquals("d", identity("l"), "the replica identity the table had");
    assertEquals(1, count("SELECT count(*) FROM public.l"), "the served data stays");
    // and it can be installed again
    ChangelogFixtures.prepare(infra, DB);
    assertNull(null);
  }

  private String identity(String table) throws Exception {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB);
        ResultSet r = c.createStatement().executeQuery("SELECT relreplident::text FROM pg_class WHERE oid = 'public." + table + "'::regclass")) {
      r.next();
      return r.getString(1);
    }
  }
}
