package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A node that runs only the query role still hears of schema changes: A runs the gateway and the
 * changelog, B only the query role, with table shapes kept for ten minutes. get_row selects the
 * columns of the shape B cached, so a column added with plain DDL shows up within the test's
 * timeout only if B's cache was dropped by the schema change notice.
 */
@ExtendWith(InfraExtension.class)
class QueryNodeSchemaChangeClusterIT {

  static final String DB = "query_ddl_it";
  static final String NAME = "queryddl";

  private TidemarkNode a;
  private TidemarkNode b;

  @AfterEach
  void stop() {
    TestNodes.stop(b);
    TestNodes.stop(a);
  }

  @Test
  void aColumnAddedByDdlReachesTheReadsOfAQueryOnlyNodeThoughItCachedTheTable(SharedInfra infra) {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.qd_item",
        "CREATE TABLE public.qd_item (id int PRIMARY KEY, v int)",
        "INSERT INTO public.qd_item VALUES (1, 10)",
        "GRANT SELECT ON public.qd_item TO tidemark_reader");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> gateway = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[0], members, "gateway,changelog");
    gateway.put(ConfigKey.NODE_ID, "node-a");
    Map<ConfigKey, String> queryOnly = ChangelogFixtures.config(infra, DB, NAME, cluster, ports[1], members, "query");
    queryOnly.put(ConfigKey.NODE_ID, "node-b");
    queryOnly.put(ConfigKey.DATABASE_CATALOG_CACHE_MS, "600000");
    a = TestNodes.start(gateway);
    b = TestNodes.start(queryOnly);
    assertEquals(-1, b.httpPort(), "B runs no gateway");

    try (McpHttpClient client = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_ONLY_TOKEN)) {
      client.initialize();
      JsonObject key = new JsonObject().put("table", "qd_item").put("key", 1);
      ToolResults.ok(client, "get_row", key);
      assertFalse(ToolResults.ok(client, "get_row", key).getJsonObject("row").containsKey("added"), "B cached the shape");

      sql(infra, DB, "ALTER TABLE public.qd_item ADD COLUMN added int DEFAULT 7");
      JsonObject described = ToolResults.ok(client, "describe_table", new JsonObject().put("table", "qd_item"));
      assertTrue(described.getJsonArray("columns").stream().map(JsonObject.class::cast).anyMatch(c -> c.getString("name").equals("added")),
          "describe_table reads the catalog on every call");
      ChangelogFixtures.await("get_row on B to return the added column", Duration.ofSeconds(30),
          () -> ToolResults.ok(client, "get_row", key).getJsonObject("row").containsKey("added"));
      assertEquals(7, ToolResults.ok(client, "get_row", key).getJsonObject("row").getInteger("added"));
    }
  }
}
