package dev.tidemark.node;

import static dev.tidemark.node.DevModeIT.psql;
import static dev.tidemark.node.DevModeIT.start;
import static dev.tidemark.node.DevModeIT.stop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.node.DevModeIT.Dev;
import dev.tidemark.testsupport.McpHttpClient;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar tidemark.jar dev --database-url} against a database of one's own, as the README
 * shows it: a class of its own (two dev starts and an uninstall), so that the test JVMs share the
 * long dev mode tests.
 */
class DevModeExistingDatabaseIT {


  @Test
  @org.junit.jupiter.api.extension.ExtendWith(dev.tidemark.testsupport.InfraExtension.class)
  void devModeServesAnExistingDatabaseAndCreatesTheDemoTablesOnlyWhenAsked(dev.tidemark.testsupport.SharedInfra infra) throws Exception {
    infra.postgres().createDatabaseIfMissing("dev_existing_it");
    String url = "postgresql://" + infra.postgres().user() + ":" + infra.postgres().password() + "@127.0.0.1:" + infra.postgres().port()
        + "/dev_existing_it";
    // the README's two commands for a database of one's own, as written, with this test's URL for its example one
    String readme = java.nio.file.Files.readString(Path.of("..", "README.md"));
    java.util.regex.Matcher example = java.util.regex.Pattern.compile(
        "java -jar node/target/tidemark.jar dev (--database-url (postgresql://\\S+))\n"
        + "java -jar node/target/tidemark.jar (uninstall --database-url \\2 --yes)\n").matcher(readme);
    assertTrue(example.find(), "the README shows dev mode and uninstall against a database of one's own");
    Dev dev = start(List.of(example.group(1).replace(example.group(2), url).split(" ")));
    try {
      assertEquals("postgresql://" + infra.postgres().user() + "@127.0.0.1:" + infra.postgres().port() + "/dev_existing_it",
          dev.value("PostgreSQL"), "the URL without its password");
      try (McpHttpClient c = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Token"))) {
        c.initialize();
        assertTrue(c.callTool("status", new JsonObject()).getJsonObject("structuredContent").containsKey("changelog_head"));
      }
      assertEquals(false, demoTables(infra), "no demo tables unless asked");
    } finally {
      stop(dev);
    }
    Dev demo = start(List.of("--database-url", url, "--demo"));
    try {
      assertEquals(true, demoTables(infra));
    } finally {
      stop(demo);
    }
    Process uninstall = new ProcessBuilder(java.util.stream.Stream.concat(Stream.of(ProcessHandle.current().info().command().orElse("java"),
        "-jar", DevModeIT.JAR.toString()), Stream.of(example.group(3).replace(example.group(2), url).split(" "))).toList())
        .redirectErrorStream(true).start();
    String said = new String(uninstall.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(uninstall.waitFor(120, java.util.concurrent.TimeUnit.SECONDS), said);
    assertEquals(0, uninstall.exitValue(), said);
    try (Connection conn = DriverManager.getConnection(infra.postgres().jdbcUrl("dev_existing_it"), infra.postgres().user(),
            infra.postgres().password());
        ResultSet rs = conn.createStatement().executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'")) {
      rs.next();
      assertEquals(0, rs.getInt(1), "the README's uninstall removed Tidemark's schema: " + said);
    }
  }

  private static boolean demoTables(dev.tidemark.testsupport.SharedInfra infra) throws Exception {
    try (Connection conn = DriverManager.getConnection(infra.postgres().jdbcUrl("dev_existing_it"), infra.postgres().user(),
            infra.postgres().password());
        ResultSet rs = conn.createStatement().executeQuery("SELECT to_regclass('public.customers') IS NOT NULL")) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
