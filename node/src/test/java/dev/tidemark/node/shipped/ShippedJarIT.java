package dev.tidemark.node.shipped;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.LocalIssuer;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator's day with the shipped jar, each step a {@code java -jar tidemark.jar} command as the docs show it, with a
 * config file and secret files: migrate, doctor, a node of every role with OAuth on against a local issuer (a JWT call
 * succeeds, as a Tidemark token's does), tokens, keys, proposals, a graceful stop, and uninstall. The steps depend on
 * each other and run in order, on a database of their own.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShippedJarIT {

  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final String db = "shipped_" + UUID.randomUUID().toString().substring(0, 8);
  private SharedInfra infra;
  private LocalIssuer issuer;
  private Path dir;
  private Path config;
  private int httpPort;
  private int opsPort;
  private Process node;
  private String token;

  @BeforeAll
  void setUp(SharedInfra infra, @TempDir Path dir) throws Exception {
    this.infra = infra;
    this.dir = dir;
    infra.postgres().createDatabaseIfMissing(db);
    // what an operator's superuser runs once (docs/security.md); the caller roles are the server's, shared by tests
    TestDatabases.sql(infra, db,
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_reader') THEN CREATE ROLE tidemark_reader;"
            + " END IF; IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tidemark_writer') THEN CREATE ROLE tidemark_writer;"
            + " END IF; END $$",
        "ALTER ROLE tidemark_reader LOGIN PASSWORD '" + ServiceHarness.CALLER_PASSWORDS.get("tidemark_reader") + "'",
        "ALTER ROLE tidemark_writer LOGIN PASSWORD '" + ServiceHarness.CALLER_PASSWORDS.get("tidemark_writer") + "'",
        "CREATE TABLE salary (id int PRIMARY KEY, amount int NOT NULL)",
        "INSERT INTO salary VALUES (1, 100), (2, 200)",
        "GRANT USAGE ON SCHEMA public TO tidemark_reader, tidemark_writer",
        "GRANT SELECT ON salary TO tidemark_reader, tidemark_writer",
        "GRANT UPDATE ON salary TO tidemark_writer");
    issuer = LocalIssuer.start("k1");
    int[] ports = FreePorts.allocate(3);
    httpPort = ports[0];
    opsPort = ports[1];
    Path secrets = Files.createDirectories(dir.resolve("secrets/callers"));
    Files.writeString(dir.resolve("secrets/tidemark-password"), infra.postgres().password());
    for (Map.Entry<String, String> role : ServiceHarness.CALLER_PASSWORDS.entrySet()) {
      Files.writeString(secrets.resolve(role.getKey()), role.getValue());
    }
    // a config file as docs/configuration.md shows one: flat dotted keys, secrets in files
    config = dir.resolve("tidemark.yaml");
    Files.writeString(config, String.join("\n",
        "database.url: postgresql://127.0.0.1:" + infra.postgres().port() + "/" + db,
        "database.user: " + infra.postgres().user(),
        "database.password-file: " + dir.resolve("secrets/tidemark-password"),
        "database.caller-password-dir: " + secrets,
        "database.approval-tables: public.salary",
        "kafka.bootstrap-servers: " + infra.kafkaBootstrapServers(),
        "kafka.topic-prefix: shipped.changelog." + db + ".",
        "http.port: " + httpPort,
        "http.public-url: http://127.0.0.1:" + httpPort,
        "ops.port: " + opsPort,
        "cluster.name: " + db,
        "cluster.port: " + ports[2],
        "cluster.members: 127.0.0.1:" + ports[2],
        "auth.oauth.issuer: " + issuer.url(),
        "auth.oauth.roles: tidemark_reader,tidemark_writer",
        ""));
  }

  @AfterAll
  void tearDown() throws Exception {
    if (node != null && node.isAlive()) {
      node.destroyForcibly().waitFor();
    }
    if (issuer != null) {
      issuer.close();
    }
  }

  private ShippedJar.Run tidemark(String... args) throws IOException, InterruptedException {
    return ShippedJar.run(dir, Map.of(), 180, args);
  }

  @Test
  @Order(1)
  void migrateInstallsTheSchemaAndTheCapture() throws Exception {
    ShippedJar.Run migrate = tidemark("migrate", "--config", config.toString());
    assertEquals(0, migrate.code(), migrate.both());
    assertTrue(migrate.out().startsWith("Tidemark schema is at version "), migrate.out());
    assertTrue(migrate.out().contains("capture set up on 1 table(s)"), migrate.out());
    ShippedJar.Run again = tidemark("migrate", "--config", config.toString());
    assertTrue(again.out().contains("(nothing to do)"), "a second run changes nothing: " + again.out());
  }

  @Test
  @Order(2)
  void doctorFindsNothingToFixBeforeTheFirstNodeStarts() throws Exception {
    ShippedJar.Run doctor = tidemark("doctor", "--config", config.toString());
    assertEquals(0, doctor.code(), doctor.both());
    assertFalse(doctor.out().contains("FAIL"), doctor.out());
    assertTrue(doctor.out().contains("ok   oauth:"), "the issuer's metadata and keys were read: " + doctor.out());
  }

  @Test
  @Order(3)
  void tokensAndKeysAreManagedFromTheJar() throws Exception {
    ShippedJar.Run created = tidemark("token", "create", "--name", "payroll-agent", "--role", "tidemark_writer", "--config",
        config.toString());
    assertEquals(0, created.code(), created.both());
    Matcher m = Pattern.compile("shown once: (tmk_\\S+)").matcher(created.out());
    assertTrue(m.find(), created.out());
    token = m.group(1);
    ShippedJar.Run listed = tidemark("token", "list", "--config", config.toString());
    assertTrue(listed.out().contains("\"name\":\"payroll-agent\"") && !listed.out().contains(token), listed.out());

    ShippedJar.Run keys = tidemark("keys", "list", "--config", config.toString());
    assertEquals(0, keys.code(), keys.both());
    assertEquals(1, keys.out().lines().filter(l -> l.contains("\"may_sign\":true")).count(), keys.out());
    ShippedJar.Run rotated = tidemark("keys", "rotate", "--grace-seconds", "3600", "--config", config.toString());
    assertEquals(0, rotated.code(), rotated.both());
    assertEquals(2, tidemark("keys", "list", "--config", config.toString()).out().lines().count());
  }

  @Test
  @Order(4)
  void aNodeOfEveryRoleServesATidemarkTokenAndAnOAuthAccessToken() throws Exception {
    node = ShippedJar.start(dir, Map.of(), dir.resolve("node.log"), "serve", "--config", config.toString(), "--roles",
        "gateway,query,command,changelog");
    Await.that("the node started from the jar is ready; its log:\n" + log(), Duration.ofMinutes(3),
        () -> node.isAlive() && status("/health/ready") == 200);
    String mcp = "http://127.0.0.1:" + httpPort + "/mcp";
    try (McpHttpClient withToken = new McpHttpClient(mcp, token)) {
      withToken.initialize();
      JsonObject caller = withToken.callTool("status", new JsonObject()).getJsonObject("structuredContent").getJsonObject("caller");
      assertEquals("payroll-agent", caller.getString("name"));
    }
    String jwt = issuer.token("k1", issuer.claims("agent-7", mcp, "tidemark_reader", "tidemark:read"));
    try (McpHttpClient withJwt = new McpHttpClient(mcp, jwt)) {
      withJwt.initialize();
      JsonObject result = withJwt.callTool("status", new JsonObject());
      assertFalse(result.getBoolean("isError", false), result.encode());
      JsonObject caller = result.getJsonObject("structuredContent").getJsonObject("caller");
      assertEquals("tidemark_reader", caller.getString("role"), caller.encode());
      assertEquals("read-only", caller.getString("access"), caller.encode());
    }
  }

  @Test
  @Order(5)
  void aProposalIsListedAndRejectedFromTheJar() throws Exception {
    String mcp = "http://127.0.0.1:" + httpPort + "/mcp";
    try (McpHttpClient agent = new McpHttpClient(mcp, token)) {
      agent.initialize();
      JsonObject raise = new JsonObject().put("table", "salary").put("key", 2).put("set", new JsonObject().put("amount", 5000));
      JsonObject plan = agent.callTool("update_rows", raise).getJsonObject("structuredContent");
      JsonObject proposed = agent.callTool("update_rows", raise.copy().put("plan_id", plan.getString("plan_id"))
          .put("idempotency_key", UUID.randomUUID().toString())).getJsonObject("structuredContent");
      assertEquals("proposed", proposed.getString("mode"), proposed.encode());
      String id = proposed.getString("proposal_id");
      ShippedJar.Run listed = tidemark("proposals", "list", "--status", "pending", "--config", config.toString());
      assertEquals(0, listed.code(), listed.both());
      assertTrue(listed.out().contains(id), listed.out());
      ShippedJar.Run rejected = tidemark("proposals", "reject", id, "--reason", "not this quarter", "--by", "ada", "--config",
          config.toString());
      assertEquals(0, rejected.code(), rejected.both());
      assertEquals(200L, TestDatabases.count(infra, db, "SELECT amount FROM salary WHERE id = 2"), "nothing was written");
    }
  }

  @Test
  @Order(6)
  void aRevokedTokenIsRefusedAndTheNodeStopsGracefully() throws Exception {
    assertEquals(0, tidemark("token", "revoke", "--name", "payroll-agent", "--config", config.toString()).code());
    try (McpHttpClient revoked = new McpHttpClient("http://127.0.0.1:" + httpPort + "/mcp", token)) {
      assertTrue(Await.until(() -> revoked.post(revoked.request("ping", null)).status() == 401, Duration.ofSeconds(5)));
    }
    node.destroy();  // SIGTERM, as Kubernetes and systemd stop a node
    assertTrue(node.waitFor(60, TimeUnit.SECONDS), "the node drained and stopped: " + log());
    // 143 is how a JVM ends on SIGTERM once its shutdown hooks ran, and what systemd and Kubernetes count as a clean stop
    assertEquals(143, node.exitValue(), log());
    assertTrue(log().contains(" drained in "), "it drained its calls before it left: " + log());
  }

  @Test
  @Order(7)
  void uninstallRemovesTidemarkFromTheDatabase() throws Exception {
    ShippedJar.Run refused = tidemark("uninstall", "--config", config.toString());
    assertEquals(2, refused.code(), "without --yes nothing is removed: " + refused.both());
    ShippedJar.Run removed = tidemark("uninstall", "--yes", "--config", config.toString());
    assertEquals(0, removed.code(), removed.both());
    assertEquals(0L, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));
    assertEquals(0L, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
  }

  private int status(String path) {
    try {
      return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + opsPort + path)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private String log() {
    return OperatorGuideIT.read(dir.resolve("node.log"));
  }
}
