package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonObject;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way an operator's command meets a setup it cannot work with stops it with one line that names the key, file or
 * right and the fix, and exit status 2, and changes nothing (docs/operations.md, "Commands"): an unreachable server, a
 * missing login or database, an unknown host, a missing secret file, a misspelt key, a token for a
 * role its caller could not run a statement as, and a port in use. A refused password needs a server that checks
 * passwords, which the suite's is not (it trusts loopback): OperatorGuideIT checks it on one that does.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CommandFailuresIT {

  @TempDir
  Path dir;
  private SharedInfra infra;

  @BeforeAll
  void prepare(SharedInfra infra) {
    this.infra = infra;
    TestNodes.prepareDatabase(infra);
  }

  private Path config(Map<ConfigKey, String> overrides) throws Exception {
    int port = FreePorts.allocate();
    Map<ConfigKey, String> values = new EnumMap<>(TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + port,
        "gateway,query,command,changelog"));
    values.putAll(overrides);
    JsonObject yaml = new JsonObject();
    values.forEach((k, v) -> yaml.put(k.key(), v));
    Path file = Files.createTempFile(dir, "tidemark", ".yaml");
    Files.writeString(file, yaml.encodePrettily());
    return file;
  }

  /** Runs the command; asserts one line on standard error, exit status 2, and returns the line. */
  private static String refused(String... args) {
    Cli.Run r = Cli.run(args);
    assertEquals(2, r.code(), "exit status 2: " + r.out() + r.err());
    List<String> lines = r.err().lines().toList();
    assertEquals(1, lines.size(), "one line: " + r.err());
    assertTrue(lines.get(0).startsWith("tidemark: "), r.err());
    assertFalse(r.err().contains("Exception"), "a sentence, not an exception: " + r.err());
    return lines.get(0);
  }

  @Test
  void nothingListeningAtTheUrlNamesTheUrlKeyAfterTheTimeout() throws Exception {
    Path cfg = config(Map.of(ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + FreePorts.allocate() + "/app"));
    String line = refused("token", "list", "--config", cfg.toString(), "--timeout", "2s");
    assertTrue(line.contains("cannot reach PostgreSQL at 127.0.0.1:") && line.contains("(database.url) within 2 s")
        && line.contains("--timeout"), line);
  }

  @Test
  void aLoginThatDoesNotExistNamesTheUserKey() throws Exception {
    String line = refused("keys", "list", "--config", config(Map.of(ConfigKey.DATABASE_USER, "no_such_login")).toString());
    assertTrue(line.contains("refused the login no_such_login (database.user)") && line.contains("docs/security.md"), line);
  }

  @Test
  void aDatabaseThatDoesNotExistNamesTheUrl() throws Exception {
    Path cfg = config(Map.of(ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + infra.postgres().port() + "/no_such_db"));
    String line = refused("migrate", "--config", cfg.toString());
    assertTrue(line.contains("has no database no_such_db (database.url)"), line);
  }

  @Test
  void anUnknownHostNamesTheUrl() throws Exception {
    String line = refused("token", "list", "--config", config(Map.of(ConfigKey.DATABASE_URL, "postgresql://db.tidemark.invalid:5432/app"))
        .toString(), "--timeout", "2s");
    assertTrue(line.contains("db.tidemark.invalid") && line.contains("database.url"), line);
  }

  @Test
  void aMissingSecretFileNamesItsKeyAndTheFile() throws Exception {
    String line = refused("migrate", "--config", config(Map.of(ConfigKey.DATABASE_PASSWORD_FILE, dir.resolve("absent").toString())).toString());
    assertTrue(line.contains("database.password-file") && line.contains("absent"), line);
  }

  @Test
  void aMisspeltKeyIsNamed() throws Exception {
    Path cfg = dir.resolve("typo.yaml");
    Files.writeString(cfg, Files.readString(config(Map.of())).replace("\"database.user\"", "\"database.usr\""));
    String line = refused("token", "list", "--config", cfg.toString());
    assertTrue(line.contains("unknown key 'database.usr'"), line);
  }

  @Test
  void aTokenForARoleItsCallerCouldNotRunAStatementAsIsNotCreated() throws Exception {
    TestDatabases.sql(infra, TestNodes.DATABASE,
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'it_nologin') THEN CREATE ROLE it_nologin NOLOGIN; END IF; END $$");
    Path cfg = config(Map.of());
    String nologin = refused("token", "create", "--name", "it-nologin", "--role", "it_nologin", "--config", cfg.toString());
    assertTrue(nologin.contains("role it_nologin cannot log in") && nologin.contains("ALTER ROLE it_nologin LOGIN")
        && nologin.contains("no password is configured for role it_nologin") && nologin.contains("database.caller-password-dir"), nologin);
    String missing = refused("token", "create", "--name", "it-ghost", "--role", "it_ghost", "--config", cfg.toString());
    assertTrue(missing.contains("role it_ghost does not exist"), missing);
    String list = Cli.run("token", "list", "--config", cfg.toString()).out();
    assertFalse(list.contains("it-nologin") || list.contains("it-ghost"), "no token was created: " + list);
  }

  @Test
  void aPortInUseNamesItsKey() throws Exception {
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      Path cfg = config(Map.of(ConfigKey.OPS_HOST, "127.0.0.1", ConfigKey.OPS_PORT, String.valueOf(taken.getLocalPort())));
      String line = refused("serve", "--roles", "gateway", "--config", cfg.toString());
      assertTrue(line.contains("cannot listen on 127.0.0.1:" + taken.getLocalPort() + " (ops.port, TIDEMARK_OPS_PORT)"), line);
    }
  }
}
