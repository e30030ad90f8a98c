package dev.tidemark.node;

import dev.tidemark.testsupport.OutputSchemas;
import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** Exactly-once commits across two clustered nodes that both run the command role. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChangeToolsClusterIT {

  static final String DB = "change_tools_cluster_it";

  private SharedInfra infra;
  private TidemarkNode a;
  private TidemarkNode b;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.cc_event",
        "CREATE TABLE public.cc_event (id bigserial PRIMARY KEY, name text NOT NULL)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.cc_event TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> gatewayAndCommand = TestNodes.config(infra, cluster, ports[0], members, "gateway,command");
    gatewayAndCommand.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    gatewayAndCommand.put(ConfigKey.NODE_ID, "node-a");
    Map<ConfigKey, String> commandOnly = TestNodes.config(infra, cluster, ports[1], members, "command,changelog");
    commandOnly.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    commandOnly.put(ConfigKey.NODE_ID, "node-b");
    a = TestNodes.start(gatewayAndCommand);
    b = TestNodes.start(commandOnly);
    assertEquals(2, a.clusterSize());
  }

  @AfterAll
  void stop() {
    TestNodes.stop(b);
    TestNodes.stop(a);
  }

  private long count(String sql) throws Exception {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    }
  }

  @Test
  void twentyConcurrentIdenticalCommitsOverTwoCommandNodesMakeExactlyOneChange() throws Exception {
    JsonObject args = new JsonObject().put("table", "cc_event").put("rows", new JsonArray().add(new JsonObject().put("name", "once")));
    String planId;
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject plan = c.callTool("insert_rows", args).getJsonObject("structuredContent");
      planId = plan.getString("plan_id");
    }
    JsonObject commit = args.copy().put("plan_id", planId).put("idempotency_key", "cluster-once");
    int callers = 20;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    CountDownLatch ready = new CountDownLatch(callers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<JsonObject>> results = new ArrayList<>();
    try {
      for (int i = 0; i < callers; i++) {
        results.add(pool.submit(() -> {
          try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(a), TestNodes.READ_WRITE_TOKEN)) {
            c.initialize();
            ready.countDown();
            go.await();
            return c.callTool("insert_rows", commit);
          }
        }));
      }
      ready.await(60, TimeUnit.SECONDS);
      go.countDown();
      int replayed = 0;
      for (Future<JsonObject> f : results) {
        JsonObject result = f.get(120, TimeUnit.SECONDS);
        assertNull(result.getValue("isError"), result::encode);
        JsonObject s = result.getJsonObject("structuredContent");
        OutputSchemas.assertFits("insert_rows", s);
        assertEquals(1, s.getJsonObject("totals").getInteger("inserted"), "every caller sees the one outcome");
        replayed += s.getBoolean("replayed") ? 1 : 0;
      }
      assertEquals(callers - 1, replayed, "one commit made the change; the others replayed its outcome");
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, count("SELECT count(*) FROM public.cc_event WHERE name = 'once'"));
    ChangelogFixtures.awaitDecoded(infra, DB);
    assertEquals(1, count("SELECT count(*) FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
        + " WHERE c.table_name = 'cc_event' AND a.idempotency_key = 'cluster-once'"));
    assertEquals(1, count("SELECT count(*) FROM tidemark.idempotency WHERE key = 'cluster-once'"));
  }
}
