package dev.tidemark.node;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Starts real nodes for integration tests against the suite's shared PostgreSQL and Kafka. */
final class TestNodes {

  /**
   * The JVM flag of every Tidemark process a test starts: only the client compiler, whose output is
   * slower code made with far less CPU. A test's process lives seconds, and on two cores the server
   * compiler's threads took the CPU the tests wait for; no behaviour depends on the compiler.
   */
  static final String CLIENT_COMPILER = "-XX:TieredStopAtLevel=1";

  static final String DATABASE = dev.tidemark.testsupport.ServiceHarness.DATABASE;
  static final String READ_WRITE_TOKEN = dev.tidemark.testsupport.NodeHarness.READ_WRITE_TOKEN;
  static final String READ_ONLY_TOKEN = dev.tidemark.testsupport.NodeHarness.READ_ONLY_TOKEN;
  /** Login passwords of the caller roles tests use; each role a test's token maps to needs one. */
  static final Map<String, String> CALLER_PASSWORDS = callerPasswords();

  private static boolean prepared;

  /** The harness's two callers, and a role with no grants for the tests of refusals. */
  private static Map<String, String> callerPasswords() {
    Map<String, String> passwords = new java.util.HashMap<>(dev.tidemark.testsupport.ServiceHarness.CALLER_PASSWORDS);
    passwords.put("it_nobody", "it-nobody-password");
    return Map.copyOf(passwords);
  }

  private TestNodes() {}

  /** Schema, demo tables and both callers, once per test JVM. */
  static synchronized void prepareDatabase(SharedInfra infra) {
    if (prepared) {
      return;
    }
    ChangelogFixtures.prepare(infra, DATABASE);
    prepared = true;
  }

  /**
   * The settings of a node that serves PostgreSQL database {@code db} (prepared as {@link ChangelogFixtures#prepare}
   * does, then given the class's {@code fixtures}), whose relay polls and reconciles capture quickly: what a class
   * that serves a database of its own starts from, before the settings of its own.
   */
  static Map<ConfigKey, String> servingDatabase(SharedInfra infra, String db, String... fixtures) {
    ChangelogFixtures.prepare(infra, db);
    ChangelogFixtures.sql(infra, db, fixtures);
    Map<ConfigKey, String> settings = new EnumMap<>(ConfigKey.class);
    settings.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    settings.put(ConfigKey.CHANGELOG_RELAY_POLL_MS, "200");
    settings.put(ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1");
    return settings;
  }

  /**
   * A config file as an operator's commands read it: the prepared test database, Tidemark's login, and the passwords of
   * the two callers prepareDatabase makes (a token's role must log in with one); {@code more} adds YAML lines at the top
   * level.
   */
  static java.nio.file.Path cliConfig(SharedInfra infra, java.nio.file.Path dir, String... more) throws java.io.IOException {
    prepareDatabase(infra);
    StringBuilder yaml = new StringBuilder("database:\n  url: " + infra.postgres().url(DATABASE) + "\n  user: " + infra.postgres().user()
        + "\n  password: " + infra.postgres().password() + "\n  caller-passwords: \"" + String.join(",", ServiceHarness.CALLER_PASSWORDS.entrySet().stream()
            .map(e -> e.getKey() + ":" + e.getValue()).sorted().toList()) + "\"\n");
    for (String line : more) {
      yaml.append(line).append('\n');
    }
    java.nio.file.Path config = dir.resolve("tidemark.yaml");
    java.nio.file.Files.writeString(config, yaml.toString());
    return config;
  }

  /** A unique cluster name, so that test classes never join each other's clusters. */
  static String clusterName() {
    return "tidemark-it-" + UUID.randomUUID().toString().substring(0, 8);
  }

  static Map<ConfigKey, String> config(SharedInfra infra, String clusterName, int clusterPort, String members, String roles) {
    Map<ConfigKey, String> v = new EnumMap<>(ConfigKey.class);
    v.put(ConfigKey.ROLES, roles);
    v.put(ConfigKey.HTTP_HOST, "127.0.0.1");
    v.put(ConfigKey.HTTP_PORT, "0");
    v.put(ConfigKey.OPS_HOST, "127.0.0.1");
    v.put(ConfigKey.OPS_PORT, "0");
    v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DATABASE));
    v.put(ConfigKey.DATABASE_USER, infra.postgres().user());
    v.put(ConfigKey.DATABASE_PASSWORD, infra.postgres().password());
    v.put(ConfigKey.DATABASE_CALLER_PASSWORDS, String.join(",", CALLER_PASSWORDS.entrySet().stream()
        .map(e -> e.getKey() + ":" + e.getValue()).sorted().toList()));
    v.put(ConfigKey.DATABASE_POOL_SIZE, "4");
    v.put(ConfigKey.KAFKA_BOOTSTRAP_SERVERS, infra.kafkaBootstrapServers());
    v.put(ConfigKey.CLUSTER_NAME, clusterName);
    v.put(ConfigKey.CLUSTER_HOST, "127.0.0.1");
    v.put(ConfigKey.CLUSTER_PORT, String.valueOf(clusterPort));
    v.put(ConfigKey.CLUSTER_MEMBERS, members);
    return v;
  }

  /** A node alone in its own cluster, running {@code roles}. */
  static TidemarkNode startAlone(SharedInfra infra, String roles, Map<ConfigKey, String> overrides) {
    int port = FreePorts.allocate();
    Map<ConfigKey, String> v = config(infra, clusterName(), port, "127.0.0.1:" + port, roles);
    v.putAll(overrides);
    return startCaughtUp(v);
  }

  /**
   * Two clustered nodes: {@code gateway-a} runs only the gateway, {@code gateway-b} every role, so
   * a call on A is served across the cluster. B starts first; returns {a, b}.
   */
  static TidemarkNode[] startGatewayPair(SharedInfra infra) {
    return startGatewayPair(infra, Map.of());
  }

  /** {@link #startGatewayPair(SharedInfra)} with {@code overrides} on both nodes. */
  static TidemarkNode[] startGatewayPair(SharedInfra infra, Map<ConfigKey, String> overrides) {
    prepareDatabase(infra);
    String cluster = clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> onlyGateway = config(infra, cluster, ports[0], members, "gateway");
    onlyGateway.put(ConfigKey.NODE_ID, "gateway-a");
    Map<ConfigKey, String> everything = config(infra, cluster, ports[1], members, "gateway,query,command,changelog");
    everything.put(ConfigKey.NODE_ID, "gateway-b");
    onlyGateway.putAll(overrides);
    everything.putAll(overrides);
    TidemarkNode b = startCaughtUp(everything);
    return new TidemarkNode[] {start(onlyGateway), b};
  }

  /** {@link #startGatewayPair} for a try-with-resources block, which stops both. */
  record GatewayPair(TidemarkNode a, TidemarkNode b) implements AutoCloseable {

    static GatewayPair start(SharedInfra infra) {
      TidemarkNode[] pair = startGatewayPair(infra);
      return new GatewayPair(pair[0], pair[1]);
    }

    @Override
    public void close() {
      stop(a);
      stop(b);
    }
  }

  static TidemarkNode start(Map<ConfigKey, String> values) {
    return await(TidemarkNode.start(TidemarkConfig.from(values)).toCompletionStage().toCompletableFuture());
  }

  /**
   * {@link #start}, and for a node with the changelog role, once its relay has decoded the WAL
   * written while no relay read the database's slot: the suite's other databases write it too, and
   * a test that changes a row at once would otherwise wait behind all of it.
   */
  static TidemarkNode startCaughtUp(Map<ConfigKey, String> values) {
    TidemarkNode node = start(values);
    if (values.getOrDefault(ConfigKey.ROLES, ConfigKey.ROLES.defaultValue()).contains("changelog")) {
      java.net.URI url = java.net.URI.create(values.get(ConfigKey.DATABASE_URL));
      ChangelogFixtures.awaitDecoded("jdbc:postgresql://" + url.getHost() + ":" + url.getPort() + url.getPath(),
          values.get(ConfigKey.DATABASE_USER), values.get(ConfigKey.DATABASE_PASSWORD));
    }
    return node;
  }

  static void stop(TidemarkNode node) {
    if (node != null) {
      try {
        await(node.close().toCompletionStage().toCompletableFuture());
      } catch (IllegalStateException e) {
        if (e.getCause() instanceof java.util.concurrent.TimeoutException) {
          // each part's stop is bounded, so an empty list means Vert.x's own close or the cluster's leave
          throw new IllegalStateException("node " + node.nodeId() + " did not stop within 90 s; parts still stopping: "
              + node.stillStopping(), e);
        }
        throw e;
      }
    }
  }

  /** A JDBC connection to the suite's test database as the superuser, for fixtures a caller cannot make. */
  static java.sql.Connection jdbc(SharedInfra infra) throws java.sql.SQLException {
    return dev.tidemark.testsupport.TestDatabases.jdbc(infra, DATABASE);
  }

  /** The key ring of database {@code db}, read as the superuser, for tests that make cursors or plan ids of their own. */
  static dev.tidemark.keys.KeyRing keyRing(SharedInfra infra, String db) {
    return dev.tidemark.testsupport.TestDatabases.keyRing(infra, db);
  }

  /** A 2025-11-25 session with {@code node}'s gateway, initialized, as the caller of {@code token}. */
  static dev.tidemark.testsupport.McpHttpClient connect(TidemarkNode node, String token) {
    dev.tidemark.testsupport.McpHttpClient c = new dev.tidemark.testsupport.McpHttpClient(mcpUrl(node), token);
    c.initialize();
    return c;
  }

  /** The headers of a 2026-07-28 {@code subscriptions/listen} POST as the caller of {@code token}. */
  static io.vertx.core.MultiMap listenHeaders(String token) {
    return dev.tidemark.testsupport.NodeHarness.listenHeaders(token);
  }

  /** A 2026-07-28 {@code subscriptions/listen} request with id {@code id} for the resources {@code uris}. */
  static io.vertx.core.json.JsonObject listenRequest(String id, java.util.List<String> uris) {
    return dev.tidemark.testsupport.NodeHarness.listenRequest(id, uris);
  }

  static String mcpUrl(TidemarkNode node) {
    return "http://127.0.0.1:" + node.httpPort() + "/mcp";
  }

  static <T> T await(java.util.concurrent.CompletableFuture<T> future) {
    try {
      return future.get(90, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      // what a start or stop that never ended was waiting on
      StringBuilder dump = new StringBuilder("threads when a node's start or stop ran past 90 s:\n");
      // threads in Tidemark's or Vert.x's code last, where the tail of a CI log shows them
      Thread.getAllStackTraces().entrySet().stream()
          .sorted(java.util.Comparator.comparing(t -> java.util.Arrays.stream(t.getValue())
              .anyMatch(f -> f.getClassName().startsWith("dev.tidemark") || f.getClassName().startsWith("io.vertx"))))
          .forEach(t -> {
            dump.append('"').append(t.getKey().getName()).append("\" ").append(t.getKey().getState()).append('\n');
            for (StackTraceElement f : t.getValue()) {
              dump.append("    at ").append(f).append('\n');
            }
          });
      System.err.println(dump);
      throw new IllegalStateException(e);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
