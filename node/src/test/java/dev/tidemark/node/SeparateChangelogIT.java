package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * database.changelog-url: a node whose served database held the changelog moves it, with its ids
 * and positions, into the changelog's own database at its relay's first start there; from then on
 * no decoded change is written into the served database, and changes_since, undo_transaction and
 * status read the changelog where it is stored, with every cursor given out before still valid.
 */
@ExtendWith(InfraExtension.class)
class SeparateChangelogIT {

  private static final String SERVED = "sepstore_served_it";
  private static final String STORE = "sepstore_store_it";

  @Test
  void theChangelogMovesToItsOwnDatabaseAndTheServedOneOnlyDecodes(SharedInfra infra) {
    ChangelogFixtures.prepare(infra, SERVED);
    infra.postgres().createDatabaseIfMissing(STORE);
    TestDatabases.sql(infra, STORE, "DROP SCHEMA IF EXISTS tidemark CASCADE");
    TestDatabases.sql(infra, SERVED, "DROP TABLE IF EXISTS public.sep_items", "CREATE TABLE public.sep_items (id int PRIMARY KEY, v text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.sep_items TO " + DevSetup.WRITER_ROLE,
        "GRANT SELECT ON public.sep_items TO " + DevSetup.READER_ROLE);
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> config = ChangelogFixtures.config(infra, SERVED, "sepstore", TestNodes.clusterName(), port,
        "127.0.0.1:" + port, "gateway,query,command,changelog");

    // before: the changelog in the served database, as every database had it
    TidemarkNode node = TestNodes.startCaughtUp(config);
    String head;
    List<String> before = new ArrayList<>();
    try {
      McpHttpClient c = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
      head = ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head");
      TestDatabases.sql(infra, SERVED, "INSERT INTO public.sep_items VALUES (1, 'one')");
      ChangelogFixtures.awaitDecoded(infra, SERVED);
      before.addAll(positions(ToolResults.ok(c, "changes_since", new JsonObject().put("cursor", head).put("tables", new JsonArray().add("sep_items")))));
      assertEquals(1, before.size(), before.toString());
    } finally {
      TestNodes.stop(node);
    }
    long servedRows = TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog");
    assertTrue(servedRows >= 1, "the served database held the changelog before");

    // after: the same database with the changelog stored apart
    config.put(ConfigKey.DATABASE_CHANGELOG_URL, infra.postgres().url(STORE));
    node = TestNodes.start(config);
    try {
      awaitDecoded(infra);
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog"),
          "what the served database held was moved out of it");
      assertEquals(servedRows, TestDatabases.count(infra, STORE, "SELECT count(*) FROM tidemark.changelog"),
          "every change the served database held is in the store, once");
      McpHttpClient c = TestNodes.connect(node, TestNodes.READ_WRITE_TOKEN);
      JsonObject args = new JsonObject().put("cursor", head).put("tables", new JsonArray().add("sep_items"));
      assertEquals(before, positions(ToolResults.ok(c, "changes_since", args)), "a cursor given out before reads the same changes");

      TestDatabases.sql(infra, SERVED, "INSERT INTO public.sep_items VALUES (2, 'two')", "UPDATE public.sep_items SET v = 'changed' WHERE id = 1");
      awaitDecoded(infra);
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog"), "no decoded change is written back");
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.changelog_commit"));
      JsonArray changes = ToolResults.ok(c, "changes_since", args).getJsonArray("changes");
      assertEquals(3, changes.size(), changes.encodePrettily());
      JsonObject update = changes.getJsonObject(2);
      assertEquals("UPDATE", update.getString("op"));
      assertEquals("one", update.getJsonObject("before").getString("v"));
      assertTrue(ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head") != null);

      // undo reads the update's before-image from the store
      JsonObject undo = new JsonObject().put("transaction", update.getString("transaction"));
      JsonObject plan = ToolResults.ok(c, "undo_transaction", undo);
      ToolResults.ok(c, "undo_transaction", undo.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", "sepstore-undo-1"));
      assertEquals(List.of("one"), TestDatabases.strings(infra, SERVED, "SELECT v FROM public.sep_items WHERE id = 1"));
      awaitDecoded(infra);
      JsonArray after = ToolResults.ok(c, "changes_since", args).getJsonArray("changes");
      assertEquals(4, after.size(), after.encodePrettily());
      assertEquals("undo_transaction", after.getJsonObject(3).getString("tool"), "the undo is attributed from the store");
      assertEquals(0, TestDatabases.count(infra, SERVED, "SELECT count(*) FROM tidemark.change_attribution"));
    } finally {
      TestNodes.stop(node);
    }
  }

  private static void awaitDecoded(SharedInfra infra) {
    TestDatabases.awaitDecoded(infra.postgres().jdbcUrl(SERVED), infra.postgres().jdbcUrl(STORE), infra.postgres().user(),
        infra.postgres().password(), Duration.ofSeconds(60));
  }

  private static List<String> positions(JsonObject page) {
    List<String> out = new ArrayList<>();
    page.getJsonArray("changes").forEach(o -> out.add(((JsonObject) o).getString("position") + " " + ((JsonObject) o).getString("op")));
    return out;
  }
}
