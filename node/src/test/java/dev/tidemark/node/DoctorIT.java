package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** tidemark doctor against the suite's PostgreSQL and broker: every check passes; a wrong database URL fails by name. */
@ExtendWith(InfraExtension.class)
class DoctorIT {

  @TempDir
  Path dir;

  private Path configFile(SharedInfra infra, Map<ConfigKey, String> overrides) throws Exception {
    int port = FreePorts.allocate();
    Map<ConfigKey, String> values = TestNodes.config(infra, TestNodes.clusterName(), port, "127.0.0.1:" + FreePorts.allocate(),
        "gateway,query,command,changelog");
    values.putAll(overrides);
    JsonObject yaml = new JsonObject(); // JSON is YAML
    values.forEach((k, v) -> yaml.put(k.key(), v));
    Path file = dir.resolve("tidemark.yaml");
    Files.writeString(file, yaml.encodePrettily());
    return file;
  }

  @Test
  void everyCheckPassesAgainstAMigratedDatabaseAndABrokerWithShareGroups(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);  // the caller roles, with their logins
    // a database of its own, migrated and with a token as an operator's would be: the shared one holds other tests' tokens
    String db = "doctor_" + java.util.UUID.randomUUID().toString().substring(0, 8);
    infra.postgres().createDatabaseIfMissing(db);
    // the two callers prepareDatabase creates (the suite's third role is made by the test that uses it)
    String callers = dev.tidemark.node.dev.DevSetup.WRITER_ROLE + ":" + TestNodes.CALLER_PASSWORDS.get(dev.tidemark.node.dev.DevSetup.WRITER_ROLE)
        + "," + dev.tidemark.node.dev.DevSetup.READER_ROLE + ":" + TestNodes.CALLER_PASSWORDS.get(dev.tidemark.node.dev.DevSetup.READER_ROLE);
    String config = configFile(infra, Map.of(ConfigKey.DATABASE_CALLER_PASSWORDS, callers,
        ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + infra.postgres().port() + "/" + db)).toString();
    assertEquals(0, Cli.run("migrate", "--config", config).code());
    assertEquals(0, Cli.run("token", "create", "--name", "doctor-agent", "--role", dev.tidemark.node.dev.DevSetup.WRITER_ROLE,
        "--config", config).code());
    Cli.Run r = Cli.run("doctor", "--config", config);
    Files.writeString(Path.of("target", "doctor-it.txt"), r.out());
    List<String> lines = r.out().lines().toList();
    assertEquals(0, r.code(), r.out() + r.err());
    for (String check : List.of("config", "postgres", "rights", "schema", "login", "capture", "wal_level", "caller roles", "token roles",
        "caller login", "kafka", "topic", "share groups", "cluster", "oauth")) {
      assertTrue(lines.stream().anyMatch(l -> l.substring(5).startsWith(check + ": ")), "no line for " + check + ":\n" + r.out());
    }
    assertTrue(lines.stream().noneMatch(l -> l.startsWith("FAIL")), r.out());
    assertTrue(lines.contains("skip oauth: no auth.oauth.issuer is set, so only Tidemark's own tokens are accepted"), r.out());
    assertEquals("tidemark doctor: no check failed", lines.get(lines.size() - 1));
    String docs = Files.readString(Path.of("..", "docs", "operations.md"));
    String example = docs.substring(docs.indexOf("```text\nok   config:") + 8);
    example = example.substring(0, example.indexOf("```"));
    assertEquals(checks(example), checks(r.out()), "docs/operations.md shows the checks doctor prints, in its order");
    for (String password : TestNodes.CALLER_PASSWORDS.values()) {
      assertFalse(r.out().contains(password), "doctor never prints a password");
    }
  }

  @Test
  void beforeMigrateEachMissingRightIsNamedWithItsFix(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    String db = "rights_" + java.util.UUID.randomUUID().toString().substring(0, 8);
    infra.postgres().createDatabaseIfMissing(db);
    String login = "it_bare_" + db.substring(7);
    dev.tidemark.testsupport.TestDatabases.sql(infra, db, "CREATE ROLE " + login + " LOGIN PASSWORD 'bare-login-pw'");
    String callers = dev.tidemark.node.dev.DevSetup.WRITER_ROLE + ":" + TestNodes.CALLER_PASSWORDS.get(dev.tidemark.node.dev.DevSetup.WRITER_ROLE);
    String config = configFile(infra, Map.of(ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + infra.postgres().port() + "/" + db,
        ConfigKey.DATABASE_USER, login, ConfigKey.DATABASE_PASSWORD, "bare-login-pw", ConfigKey.DATABASE_CALLER_PASSWORDS, callers)).toString();
    Cli.Run r = Cli.run("doctor", "--roles", "command", "--config", config);
    assertEquals(1, r.code(), r.out());
    List<String> rights = r.out().lines().filter(l -> l.startsWith("FAIL rights: ")).toList();
    assertTrue(rights.stream().anyMatch(l -> l.contains("may not create schema tidemark") && l.contains("GRANT CREATE ON DATABASE")), r.out());
    assertTrue(rights.stream().anyMatch(l -> l.contains("neither REPLICATION nor superuser") && l.contains("ALTER ROLE " + login + " REPLICATION")),
        r.out());
    // migrate refuses for the same reasons, and leaves the database as it was: no schema, no slot
    Cli.Run migrate = Cli.run("migrate", "--config", config);
    assertEquals(2, migrate.code(), migrate.out() + migrate.err());
    assertTrue(migrate.err().contains("GRANT CREATE ON DATABASE") && migrate.err().contains("REPLICATION"), migrate.err());
    assertEquals(0L, dev.tidemark.testsupport.TestDatabases.count(infra, db,
        "SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));
    assertEquals(0L, dev.tidemark.testsupport.TestDatabases.count(infra, db,
        "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
  }

  /** Each line's status word and check name. */
  private static List<String> checks(String output) {
    return output.lines().filter(l -> l.contains(": ") && !l.startsWith("tidemark doctor"))
        .map(l -> l.substring(5, l.indexOf(": "))).toList();
  }

  @Test
  void aWrongDatabaseUrlFailsWithANamedLineAndExitStatusOne(SharedInfra infra) throws Exception {
    Cli.Run r = Cli.run("doctor", "--roles", "command", "--config", configFile(infra, Map.of(
        ConfigKey.DATABASE_URL, "postgresql://127.0.0.1:" + FreePorts.allocate() + "/nowhere")).toString());
    assertEquals(1, r.code(), r.out() + r.err());
    Files.writeString(Path.of("target", "doctor-it-wrong-url.txt"), r.out());
    assertTrue(r.out().lines().anyMatch(l -> l.startsWith("FAIL postgres: cannot connect to 127.0.0.1:")
        && l.contains("check database.url")), r.out());
    assertTrue(r.out().lines().anyMatch(l -> l.equals("skip kafka: this node runs [COMMAND], which does not use Kafka")), r.out());
    assertTrue(r.out().strip().endsWith("check(s) failed"), r.out());
  }

  @Test
  void anUnreachableBrokerFailsTheKafkaLine(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    Cli.Run r = Cli.run("doctor", "--config", configFile(infra, Map.of(
        ConfigKey.KAFKA_BOOTSTRAP_SERVERS, "127.0.0.1:" + FreePorts.allocate(), ConfigKey.KAFKA_REQUEST_TIMEOUT_MS, "1500")).toString());
    assertEquals(1, r.code(), r.out());
    assertTrue(r.out().lines().anyMatch(l -> l.startsWith("FAIL kafka: cannot reach Kafka at 127.0.0.1:")), r.out());
  }

  @Test
  void anIssuerWhoseMetadataCannotBeReadFailsTheOauthLineAsANodeStartWould(SharedInfra infra) throws Exception {
    TestNodes.prepareDatabase(infra);
    String issuer = "http://127.0.0.1:" + FreePorts.allocate() + "/realms/agents";
    Cli.Run r = Cli.run("doctor", "--roles", "query", "--config", configFile(infra, Map.of(
        ConfigKey.AUTH_OAUTH_ISSUER, issuer, ConfigKey.AUTH_OAUTH_ROLES, dev.tidemark.node.dev.DevSetup.READER_ROLE,
        ConfigKey.HTTP_PUBLIC_URL, "https://tidemark.example.com")).toString());
    assertEquals(1, r.code(), r.out());
    assertTrue(r.out().lines().anyMatch(l -> l.startsWith("FAIL oauth: ") && l.contains("metadata")
        && l.contains("a node with this config would not start")), r.out());
  }
}
