package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

  @TempDir
  Path dir;

  private Path file(String yaml) throws Exception {
    return yamlFile(dir, yaml);
  }

  /** {@code yaml} written as tidemark.yaml in {@code dir}, for the config tests that load a file. */
  static Path yamlFile(Path dir, String yaml) throws Exception {
    Path f = dir.resolve("tidemark.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  @Test
  void withNothingGivenEveryKeyTakesItsDefault() {
    TidemarkConfig c = ConfigLoader.load(null, Map.of(), Map.of());
    assertEquals(8080, c.http().port());
    assertEquals("/mcp", c.http().path());
    assertEquals(4 * 1024 * 1024, c.http().maxBodyBytes());
    assertEquals(Set.of(Role.values()), c.roles());
    assertEquals("main", c.database().name());
    assertEquals(List.of("public"), c.database().schemas());
    assertTrue(c.authEnabled());
  }

  @Test
  void theFileIsReadFlatOrNestedAndTheEnvironmentThenFlagsWin() throws Exception {
    Path f = file("""
        http.port: 9000
        database:
          url: postgresql://db.internal:6543/shop
          schemas: [public, sales]
        kafka.bootstrap-servers: k1:9092
        """);
    TidemarkConfig fromFile = ConfigLoader.load(f, Map.of(), Map.of());
    assertEquals(9000, fromFile.http().port());
    assertEquals("db.internal", fromFile.database().host());
    assertEquals(6543, fromFile.database().port());
    assertEquals("shop", fromFile.database().dbname());
    assertEquals(List.of("public", "sales"), fromFile.database().schemas());

    TidemarkConfig withEnv = ConfigLoader.load(f, Map.of("TIDEMARK_HTTP_PORT", "9100", "TIDEMARK_KAFKA_BOOTSTRAP_SERVERS", "k2:9092"), Map.of());
    assertEquals(9100, withEnv.http().port());
    assertEquals("k2:9092", withEnv.kafka().bootstrapServers());

    TidemarkConfig withFlags = ConfigLoader.load(f, Map.of("TIDEMARK_HTTP_PORT", "9100"), Map.of(ConfigKey.HTTP_PORT, "9200", ConfigKey.ROLES, "query"));
    assertEquals(9200, withFlags.http().port());
    assertEquals(Set.of(Role.QUERY), withFlags.roles());
  }

  @Test
  void aPasswordFileOverridesThePassword() throws Exception {
    Path secret = dir.resolve("password");
    Files.writeString(secret, "from-the-secret\n");
    TidemarkConfig c = ConfigLoader.load(file("database.password: inline\n"),
        Map.of("TIDEMARK_DATABASE_PASSWORD_FILE", secret.toString()), Map.of());
    assertEquals("from-the-secret", c.database().password());
    assertTrue(!c.database().toString().contains("from-the-secret"), "the password never appears in logs");
  }

  @Test
  void anUnknownKeyIsRefusedAndNamed() throws Exception {
    Path f = file("http:\n  prot: 9000\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfigLoader.load(f, Map.of(), Map.of()));
    assertTrue(e.getMessage().contains("http.prot"), e.getMessage());
  }

  @Test
  void aBadValueNamesItsKeyAndEnvironmentVariable() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_HTTP_PORT", "eighty"), Map.of()));
    assertTrue(e.getMessage().contains("http.port") && e.getMessage().contains("TIDEMARK_HTTP_PORT"), e.getMessage());
    IllegalArgumentException role = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of(), Map.of(ConfigKey.ROLES, "gateway,cache")));
    assertTrue(role.getMessage().contains("cache"), role.getMessage());
    IllegalArgumentException url = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_DATABASE_URL", "mysql://x/y"), Map.of()));
    assertTrue(url.getMessage().contains("database.url"), url.getMessage());
  }

  @Test
  void anUnknownEnvironmentVariableIsRefusedAndNamedButKubernetesServiceLinksAreNot() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_HTTP_PROT", "9000"), Map.of()));
    assertTrue(e.getMessage().contains("TIDEMARK_HTTP_PROT"), e.getMessage());
    TidemarkConfig c = ConfigLoader.load(null, Map.of("TIDEMARK_GATEWAY_SERVICE_HOST", "10.0.0.7",
        "TIDEMARK_GATEWAY_PORT", "tcp://10.0.0.7:80", "TIDEMARK_GATEWAY_PORT_80_TCP_ADDR", "10.0.0.7", "PATH", "/bin"), Map.of());
    assertEquals(8080, c.http().port());
  }

  @Test
  void aValueOfTheWrongTypeNamesItsKey() throws Exception {
    for (String yaml : List.of("http.port: [1, 2]\n", "http:\n  port:\n    number: 1\n", "auth.enabled: 1\n",
        "database.pool-size: 99999999999\n", "log.format: xml\n", "changelog.relay-batch-size: 100001\n")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfigLoader.load(file(yaml), Map.of(), Map.of()), yaml);
      String key = yaml.contains(":\n  port") ? "http.port" : yaml.substring(0, yaml.indexOf(':'));
      assertTrue(e.getMessage().contains(key), yaml + " -> " + e.getMessage());
    }
  }

  @Test
  void keysThatContradictEachOtherStopTheNodeNamingBoth() throws Exception {
    IllegalArgumentException ports = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_HTTP_PORT", "9090"), Map.of()));
    assertTrue(ports.getMessage().contains("http.port") && ports.getMessage().contains("ops.port"), ports.getMessage());
    // a node without the gateway role opens no MCP port, so its http.port clashes with nothing
    assertEquals(9090, ConfigLoader.load(null, Map.of("TIDEMARK_HTTP_PORT", "9090"), Map.of(ConfigKey.ROLES, "query")).ops().port());
    IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(file("http.port: 1\nhttp:\n  port: 2\n"), Map.of(), Map.of()));
    assertTrue(twice.getMessage().contains("http.port"), twice.getMessage());
    IllegalArgumentException duplicate = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(file("http.port: 1\nhttp.port: 2\n"), Map.of(), Map.of()));
    assertTrue(duplicate.getMessage().contains("http.port"), duplicate.getMessage());
    IllegalArgumentException anonymous = assertThrows(IllegalArgumentException.class, () -> ConfigLoader.load(null,
        Map.of("TIDEMARK_AUTH_ENABLED", "false", "TIDEMARK_HTTP_HOST", "127.0.0.1", "TIDEMARK_AUTH_ANONYMOUS_ROLE", "tidemark"), Map.of()));
    assertTrue(anonymous.getMessage().contains("auth.anonymous-role") && anonymous.getMessage().contains("database.user"),
        anonymous.getMessage());
    IllegalArgumentException open = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_AUTH_ENABLED", "false"), Map.of()));
    assertTrue(open.getMessage().contains("auth.enabled") && open.getMessage().contains("http.host"), open.getMessage());
  }

  @Test
  void logFormatAndLevelAreRead() throws Exception {
    TidemarkConfig c = ConfigLoader.load(file("log:\n  format: json\n  level: debug\n"), Map.of(), Map.of());
    assertEquals(new TidemarkConfig.LogConfig("json", "debug"), c.log());
    assertEquals(new TidemarkConfig.LogConfig("text", "info"), ConfigLoader.load(null, Map.of(), Map.of()).log());
  }
}
