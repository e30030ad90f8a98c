package dev.tidemark.gateway;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.SseStream;
import dev.tidemark.testsupport.TestDatabases;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the gateway adds to the roles' tools, with every role behind it, against a real PostgreSQL
 * and Kafka: which callers are shown migrate and the restore tools, the prompt that walks through a
 * migration, the notification a migration sends, and the input schemas' bounds on a page. What the
 * tools themselves do is tested in their roles' modules, over the event bus.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RoleToolsOverMcpIT {

  static final String DB = "role_tools_over_mcp_it";

  private SharedInfra infra;
  private NodeHarness node;
  private McpHttpClient writer;
  private McpHttpClient reader;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB, "GRANT CREATE ON SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    node = GatewayFront.everyRole(infra, DB, Map.of(ConfigKey.COMMAND_MIGRATE_ROLES, "tidemark_writer"));
    writer = node.connect(NodeHarness.READ_WRITE_TOKEN);
    reader = node.connect(NodeHarness.READ_ONLY_TOKEN);
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(writer, reader, node);
  }

  @BeforeEach
  void fresh() {
    sql(infra, DB, "DROP TABLE IF EXISTS public.item, public.mg_new CASCADE");
    commit(migration("CREATE TABLE public.item (id int PRIMARY KEY, name text)"));
    sql(infra, DB, "INSERT INTO public.item VALUES (1, 'apple'), (2, 'pear'), (3, NULL)");
    TestDatabases.awaitDecoded(infra, DB);
  }

  private static JsonObject migration(String... statements) {
    return new JsonObject().put("statements", new JsonArray(List.of((Object[]) statements)));
  }

  private void commit(JsonObject args) {
    JsonObject plan = ToolResults.ok(writer, "migrate", args);
    ToolResults.ok(writer, "migrate", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
  }

  private static List<String> toolNames(McpHttpClient client) {
    return client.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools").stream()
        .map(t -> ((JsonObject) t).getString("name")).toList();
  }

  private List<String> rows(String sql) {
    return TestDatabases.strings(infra, DB, sql);
  }

  @Test
  void onlyTheConfiguredRolesSeeMigrateAndACallOfItFromAnotherIsAnUnknownTool() {
    assertTrue(toolNames(writer).contains("migrate"));
    assertFalse(toolNames(reader).contains("migrate"));
    JsonObject response = reader.rpc("tools/call", new JsonObject().put("name", "migrate")
        .put("arguments", migration("DROP TABLE public.item")));
    assertEquals(-32602, response.getJsonObject("error").getInteger("code"), response::encode);
    assertEquals(List.of("3"), rows("SELECT count(*) FROM public.item"));
  }

  @Test
  void aReadOnlyCallerIsNotShownTheRestoreToolsAndCannotCallThem() {
    String head = ToolResults.ok(writer, "status", new JsonObject()).getString("changelog_head");
    sql(infra, DB, "UPDATE public.item SET name = 'w' WHERE id = 2");
    TestDatabases.awaitDecoded(infra, DB);
    JsonObject change = ToolResults.ok(writer, "changes_since", new JsonObject().put("cursor", head).put("limit", 1000))
        .getJsonArray("changes").stream().map(JsonObject.class::cast).filter(c -> "UPDATE".equals(c.getString("op")))
        .findFirst().orElseThrow();
    assertFalse(toolNames(reader).stream().anyMatch(List.of("restore_rows", "undo_transaction")::contains),
        "a read-only caller is not shown the restore tools");
    JsonObject response = reader.rpc("tools/call", new JsonObject().put("name", "undo_transaction")
        .put("arguments", new JsonObject().put("transaction", change.getString("transaction"))));
    assertEquals(-32602, response.getJsonObject("error").getInteger("code"), response::encode);
    assertEquals(List.of("w"), rows("SELECT name FROM public.item WHERE id = 2"));
  }

  @Test
  void theSafeMigrationPromptWalksThroughPlanConsentAndCommit() {
    String text = writer.rpc("prompts/get", new JsonObject().put("name", "safe-migration")
            .put("arguments", new JsonObject().put("change", "add a qty column to item")))
        .getJsonObject("result").getJsonArray("messages").getJsonObject(0).getJsonObject("content").getString("text");
    assertTrue(text.contains("add a qty column to item") && text.contains("migrate") && text.contains("lost")
        && text.contains("idempotency_key") && text.contains("confirm: true"), text);
    assertEquals(-32602, writer.rpc("prompts/get", new JsonObject().put("name", "safe-migration")).getJsonObject("error").getInteger("code"));
  }

  @Test
  void aMigrationSendsResourcesListChanged() throws Exception {
    try (SseStream stream = SseStream.open(HttpMethod.GET, node.mcpUrl(), NodeHarness.streamHeaders(reader, null), null)) {
      commit(migration("CREATE TABLE public.mg_new (id int PRIMARY KEY, label text)"));
      assertNotNull(stream.await("notifications/resources/list_changed", 15_000), "a migration sends list_changed");
    }
  }

  @Test
  void theInputSchemasBoundMaxBytesAndLimitBeforeTheQueryRoleIsAsked() {
    ToolResults.error(reader, "query", new JsonObject().put("sql", "SELECT 1").put("max_bytes", 4 * 1024 * 1024 + 1), "INVALID_ARGUMENTS");
    ToolResults.error(reader, "query", new JsonObject().put("sql", "SELECT 1").put("limit", 10_001), "INVALID_ARGUMENTS");
    ToolResults.error(reader, "list_rows", new JsonObject().put("table", "item").put("limit", 10_001), "INVALID_ARGUMENTS");
  }
}
