package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
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
    TestNodes.prepareDatabase(infra);
    Path config = dir.resolve("tidemark.yaml");
    Files.writeString(config, "database:\n  url: " + infra.postgres().url(TestNodes.DATABASE) + "\n  user: " + infra.postgres().user()
        + "\n  password: " + infra.postgres().password() + "\n");

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
}
