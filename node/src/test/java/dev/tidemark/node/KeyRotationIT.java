package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tidemark keys rotate} without a restart: the node signs with the new key once it is
 * active, what the previous key sealed keeps working for the grace period, and stops after it.
 */
@ExtendWith(InfraExtension.class)
class KeyRotationIT {

  private static final String DB = "key_rotation_it";

  /** The id of the key that sealed a cursor (its bytes 1 to 4). */
  private static int keyOf(String sealed) {
    return ByteBuffer.wrap(Base64.getUrlDecoder().decode(sealed), 1, 4).getInt();
  }

  /** The low byte of the id of the key that signed a plan id (its byte 1), all a plan id carries of it. */
  private static int planKeyOf(String planId) {
    return Base64.getUrlDecoder().decode(planId.substring(3))[1] & 0xff;
  }

  @Test
  void aRotatedKeySignsSoonAndThePreviousKeyVerifiesUntilItsGraceEnds(SharedInfra infra, @TempDir Path dir) throws Exception {
    ChangelogFixtures.prepare(infra, DB);
    ChangelogFixtures.sql(infra, DB, "SELECT tidemark.capture_schemas(ARRAY['public'])");
    Path config = dir.resolve("tidemark.yaml");
    Files.writeString(config, "keys.refresh-seconds: 1\ndatabase:\n  url: " + infra.postgres().url(DB) + "\n  user: "
        + infra.postgres().user() + "\n  password: " + infra.postgres().password() + "\n");
    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query,command", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DB), ConfigKey.KEYS_REFRESH_SECONDS, "1"));
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
      c.initialize();
      JsonObject page = new JsonObject().put("table", "customers").put("limit", 2);
      String oldCursor = ToolResults.ok(c, "list_rows", page).getString("next_cursor");
      JsonObject change = new JsonObject().put("table", "products").put("key", 1).put("set", new JsonObject().put("active", true));
      String oldPlan = ToolResults.ok(c, "update_rows", change).getString("plan_id");
      String oldChanges = ToolResults.ok(c, "status", new JsonObject()).getString("changelog_head");
      int first = keyOf(oldCursor);
      assertEquals(first & 0xff, planKeyOf(oldPlan));

      Cli.Run rotated = Cli.run("keys", "rotate", "--grace-seconds", "60", "--config", config.toString());
      assertEquals(0, rotated.code(), rotated.err());
      assertTrue(Await.until(() -> keyOf(ToolResults.ok(c, "list_rows", page).getString("next_cursor")) != first, Duration.ofSeconds(20)),
          "the node signs with the new key once it is active, without a restart");
      assertEquals((first + 1) & 0xff, planKeyOf(ToolResults.ok(c, "update_rows", change).getString("plan_id")));
      ToolResults.ok(c, "list_rows", page.copy().put("cursor", oldCursor));
      ToolResults.ok(c, "changes_since", new JsonObject().put("cursor", oldChanges));
      JsonObject committed = ToolResults.ok(c, "update_rows", change.copy().put("plan_id", oldPlan).put("idempotency_key", "rotate-1"));
      assertEquals("commit", committed.getString("mode"), "a plan of the previous key commits during the grace period");

      Cli.Run listed = Cli.run("keys", "list", "--config", config.toString());
      assertEquals(0, listed.code(), listed.err());
      assertFalse(listed.out().contains("secret"), "the list never shows a secret: " + listed.out());

      Cli.Run again = Cli.run("keys", "rotate", "--grace-seconds", "0", "--config", config.toString());
      assertEquals(0, again.code(), again.err());
      assertTrue(Await.until(() -> c.callTool("list_rows", page.copy().put("cursor", oldCursor)).getJsonObject("structuredContent")
          .getJsonObject("error") != null, Duration.ofSeconds(20)), "after its grace period the first key verifies nothing");
      ToolResults.error(c, "list_rows", page.copy().put("cursor", oldCursor), "INVALID_CURSOR");
      ToolResults.error(c, "changes_since", new JsonObject().put("cursor", oldChanges), "INVALID_CURSOR");
      // signing moved on, and commits still verify in the database under the newest key
      JsonObject plan = ToolResults.ok(c, "update_rows", change);
      assertEquals("commit", ToolResults.ok(c, "update_rows", change.copy().put("plan_id", plan.getString("plan_id"))
          .put("idempotency_key", "rotate-2")).getString("mode"));
    } finally {
      TestNodes.stop(node);
    }
  }
}
