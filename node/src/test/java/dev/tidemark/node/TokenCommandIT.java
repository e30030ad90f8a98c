package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code tidemark token} and {@code tidemark migrate} against a real database, and a node that honours what they did. */
@ExtendWith(InfraExtension.class)
class TokenCommandIT {

  private static Cli.Run run(String... args) {
    return Cli.run(args);
  }

  @Test
  void aCreatedTokenWorksIsListedWithoutItsSecretAndStopsWorkingOnceRevoked(SharedInfra infra, @TempDir Path dir) throws Exception {
    Path config = configFor(infra, dir);

    Cli.Run migrate = run("migrate", "--config", config.toString());
    assertEquals(0, migrate.code(), migrate.err());
    assertTrue(migrate.out().contains("nothing to do"), migrate.out());

    Cli.Run created = run("token", "create", "--name", "it-cli", "--role", "tidemark_reader", "--read-only", "--config", config.toString());
    assertEquals(0, created.code(), created.err());
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    String token = m.group(1);

    Cli.Run listed = run("token", "list", "--config", config.toString());
    assertTrue(listed.out().contains("\"name\":\"it-cli\""), listed.out());
    assertFalse(listed.out().contains(token), "the token itself is never shown again");
    assertFalse(listed.out().contains("hash"), "nor its hash");

    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query", Map.of());
    try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), token)) {
      c.initialize();
      JsonObject caller = c.callTool("status", new JsonObject()).getJsonObject("structuredContent").getJsonObject("caller");
      assertEquals("it-cli", caller.getString("name"));
      assertEquals("read-only", caller.getString("access"));

      Cli.Run revoked = run("token", "revoke", "--name", "it-cli", "--config", config.toString());
      assertEquals(0, revoked.code(), revoked.err());
      // each attempt takes the 250 ms a refused credential waits; the node knew of it before the first
      assertTrue(Await.until(() -> c.post(c.request("ping", null)).status() == 401, Duration.ofSeconds(1)),
          "a revoked token is refused within a second, although the node had it cached");
    } finally {
      TestNodes.stop(node);
    }

    Cli.Run again = run("token", "revoke", "--name", "it-cli", "--config", config.toString());
    assertEquals(2, again.code());
    assertTrue(again.err().contains("it-cli"), again.err());
    Cli.Run badName = run("token", "create", "--name", "has space", "--role", "r", "--config", config.toString());
    assertEquals(2, badName.code());
    assertTrue(badName.err().contains("--name"), badName.err());
  }

  @Test
  void aTokenBoundToADatabaseReachesNoOtherAndOneWithAnExpiryStopsWorkingThen(SharedInfra infra, @TempDir Path dir) throws Exception {
    Path config = configFor(infra, dir);
    Cli.Run unknown = run("token", "create", "--name", "it-other-db", "--role", "tidemark_reader", "--database", "sales,hr",
        "--config", config.toString());
    assertEquals(2, unknown.code(), "a database the config does not serve is refused: " + unknown.err());
    assertTrue(unknown.err().contains("hr is not served"), unknown.err());
    Cli.Run elsewhere = run("token", "create", "--name", "it-other-db", "--role", "tidemark_reader", "--database", "sales",
        "--config", config.toString());
    assertEquals(0, elsewhere.code(), elsewhere.err());
    Cli.Run badExpiry = run("token", "create", "--name", "it-bad", "--role", "r", "--expires-in", "soon", "--config", config.toString());
    assertEquals(2, badExpiry.code());
    assertTrue(badExpiry.err().contains("--expires-in"), badExpiry.err());

    TidemarkNode node = TestNodes.startAlone(infra, "gateway,query", Map.of());
    // created once the node runs, so that its few seconds are not spent on the node's start
    Cli.Run expiring = run("token", "create", "--name", "it-expiring", "--role", "tidemark_reader", "--expires-in", "8s",
        "--config", config.toString());
    assertEquals(0, expiring.code(), expiring.err());
    assertTrue(expiring.out().contains("valid until"), expiring.out());
    assertTrue(run("token", "list", "--config", config.toString()).out().contains("\"expires_at\""));
    try (McpHttpClient other = new McpHttpClient(TestNodes.mcpUrl(node), token(elsewhere));
        McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), token(expiring))) {
      McpHttpClient.Reply refused = other.post(other.request("initialize", new JsonObject().put("protocolVersion", "2025-11-25")
          .put("capabilities", new JsonObject()).put("clientInfo", new JsonObject().put("name", "it").put("version", "1"))));
      assertEquals(403, refused.status(), "a token bound to sales cannot reach " + TestNodes.DATABASE + ": " + refused.body());
      c.initialize();
      assertEquals("it-expiring", c.callTool("status", new JsonObject()).getJsonObject("structuredContent")
          .getJsonObject("caller").getString("name"));
      assertTrue(Await.until(() -> c.post(c.request("ping", null)).status() == 401, Duration.ofSeconds(15)),
          "the token is refused once it expired");
      McpHttpClient.Reply expired = c.post(c.request("ping", null));
      assertTrue(expired.body().contains("expired"), expired.body());
    } finally {
      TestNodes.stop(node);
    }
  }

  /** The prepared test database, and a config file that names it. */
  private static Path configFor(SharedInfra infra, Path dir) throws java.io.IOException {
    // a second database the config serves and the node of the test does not, for a token bound to it
    infra.postgres().createDatabaseIfMissing("it_tokens_sales");
    return TestNodes.cliConfig(infra, dir, "databases:", "  - {name: sales, url: \"" + infra.postgres().url("it_tokens_sales") + "\"}");
  }

  private static String token(Cli.Run created) {
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    return m.group(1);
  }
}
