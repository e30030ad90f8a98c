package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tidemark consumers list} and {@code delete} against a running node, and what /metrics
 * shows of events consumers: how many exist, the share consumers the node holds open, removals and
 * quota refusals.
 */
@ExtendWith(InfraExtension.class)
class ConsumersCommandIT {

  static final String DB = "consumers_command_it";

  @TempDir
  Path dir;

  private static JsonObject next(String consumer) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add("cc_items")).put("lease_seconds", 10).put("wait_ms", 0);
  }

  @Test
  void anAdministratorListsAndDeletesConsumersAndMetricsCountThem(SharedInfra infra) throws Exception {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.cc_items (id int PRIMARY KEY)", "GRANT SELECT ON public.cc_items TO tidemark_reader");
    Map<ConfigKey, String> settings = new EnumMap<>(ConfigKey.class);
    settings.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    settings.put(ConfigKey.KAFKA_TOPIC_PREFIX, "it.consumers-command.");
    settings.put(ConfigKey.EVENTS_CONSUMER_SWEEP_SECONDS, "1");
    settings.put(ConfigKey.EVENTS_MAX_CONSUMERS_PER_CALLER, "2");
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query,changelog", settings);
    try (McpHttpClient client = TestNodes.connect(node, TestNodes.READ_ONLY_TOKEN)) {
      // the changelog role makes the topic as it starts
      Await.that("a first consumer", Duration.ofSeconds(60), () -> !client.callTool("events_next", next("kept")).getBoolean("isError", false));
      ToolResults.ok(client, "events_next", next("doomed"));
      JsonObject refused = ToolResults.error(client, "events_next", next("third"), "LIMIT_EXCEEDED");
      assertEquals("events.max-consumers-per-caller", refused.getString("limit"));

      Cli.Run listed = consumers(infra, node, settings, "list");
      assertEquals(0, listed.code(), listed.err());
      List<JsonObject> rows = listed.out().lines().map(JsonObject::new).toList();
      assertEquals(List.of("doomed", "kept"), rows.stream().map(r -> r.getString("name")).sorted().toList(), listed.out());
      JsonObject doomed = rows.stream().filter(r -> r.getString("name").equals("doomed")).findFirst().orElseThrow();
      assertEquals("tidemark_reader", doomed.getString("owner_role"));
      String group = doomed.getString("share_group");
      assertTrue(group.endsWith(".doomed"), doomed::encode);

      String scrape = awaitScrape(node, "tidemark_events_consumers{database=\"main\"} 2.0");
      assertTrue(MetricsIT.value(scrape, "tidemark_events_share_consumers", "database=\"main\"") >= 1, scrape);
      assertEquals(1.0, MetricsIT.value(scrape, "tidemark_events_consumer_refusals_total",
          "database=\"main\",limit=\"events.max-consumers-per-caller\""), scrape);

      Cli.Run deleted = consumers(infra, node, settings, "delete", group, "--wait", "60");
      assertEquals(0, deleted.code(), deleted.out() + deleted.err());
      assertTrue(deleted.out().contains("removed"), deleted.out());
      ToolResults.error(client, "events_status", new JsonObject().put("consumer", "doomed"), "NOT_FOUND");
      Cli.Run after = consumers(infra, node, settings, "list");
      assertFalse(after.out().contains("\"doomed\""), after.out());
      assertEquals(1.0, MetricsIT.value(MetricsIT.scrape(node), "tidemark_events_consumers_removed_total",
          "database=\"main\",reason=\"requested\""));
      // its place is free again
      assertTrue(ToolResults.ok(client, "events_next", next("third")).getBoolean("created"));

      Cli.Run unknown = consumers(infra, node, settings, "delete", group);
      assertEquals(1, unknown.code(), unknown.out());
      assertTrue(unknown.err().contains("tidemark consumers list"), unknown.err());
    } finally {
      TestNodes.stop(node);
    }
  }

  private static String awaitScrape(TidemarkNode node, String line) {
    String[] last = {""};
    Await.that(line + " on /metrics", Duration.ofSeconds(60), () -> {
      last[0] = MetricsIT.scrape(node);
      return last[0].contains(line);
    });
    return last[0];
  }

  /** Runs {@code tidemark consumers ...} with a config file that reaches the node's database. */
  private Cli.Run consumers(SharedInfra infra, TidemarkNode node, Map<ConfigKey, String> settings, String... args) throws Exception {
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> values = TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + port, "query");
    values.putAll(settings);
    return Cli.withConfig(dir, values, "consumers", args);
  }
}
