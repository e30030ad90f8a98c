package dev.tidemark.node;

import dev.tidemark.database.Pools;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;

/** A database of its own per test class, and plain-SQL writers; the changelog topic's reader is the changelog module's TopicReader. */
final class ChangelogFixtures {

  private ChangelogFixtures() {}

  /** Tidemark's schema, the demo tables and both callers in PostgreSQL database {@code db}. */
  static void prepare(SharedInfra infra, String db) {
    infra.postgres().createDatabaseIfMissing(db);
    Vertx vertx = Vertx.vertx();
    try {
      Map<ConfigKey, String> v = TestNodes.config(infra, "prepare", 0, "", "query");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
      Pool pool = Pools.create(vertx, TidemarkConfig.from(v).database());
      TestNodes.await(DevSetup.prepare(pool, TestNodes.READ_WRITE_TOKEN, TestNodes.READ_ONLY_TOKEN, TestNodes.CALLER_PASSWORDS)
          .toCompletionStage().toCompletableFuture());
    } finally {
      TestNodes.await(vertx.close().toCompletionStage().toCompletableFuture());
    }
  }

  /** Node settings for PostgreSQL database {@code db}, served as {@code name} (so its topic is its own). */
  static Map<ConfigKey, String> config(SharedInfra infra, String db, String name, String cluster, int port, String members,
      String roles) {
    Map<ConfigKey, String> v = TestNodes.config(infra, cluster, port, members, roles);
    v.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    v.put(ConfigKey.DATABASE_NAME, name);
    v.put(ConfigKey.CHANGELOG_RELAY_POLL_MS, "200");
    v.put(ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1");
    return v;
  }

  /**
   * Two nodes of one cluster for database {@code db}, served as {@code name}: B (node id
   * {@code <prefix>-b}) runs every role and starts first, A ({@code <prefix>-a}) the gateway and
   * the query role; both take {@code overrides}. Returns {a, b}.
   */
  static TidemarkNode[] startQueryPair(SharedInfra infra, String db, String name, String prefix, Map<ConfigKey, String> overrides) {
    String cluster = TestNodes.clusterName();
    int[] ports = dev.tidemark.devstack.FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> bConfig = config(infra, db, name, cluster, ports[1], members, "gateway,query,command,changelog");
    bConfig.put(ConfigKey.NODE_ID, prefix + "-b");
    bConfig.putAll(overrides);
    TidemarkNode b = TestNodes.startCaughtUp(bConfig);
    Map<ConfigKey, String> aConfig = config(infra, db, name, cluster, ports[0], members, "gateway,query");
    aConfig.put(ConfigKey.NODE_ID, prefix + "-a");
    aConfig.putAll(overrides);
    return new TidemarkNode[] {TestNodes.start(aConfig), b};
  }

  /** A changelog-only node (the relay) for database {@code db}, served as {@code name}, alone in its cluster. */
  static TidemarkNode startRelay(SharedInfra infra, String db, String name, Map<ConfigKey, String> overrides) {
    int port = dev.tidemark.devstack.FreePorts.allocate();
    Map<ConfigKey, String> v = config(infra, db, name, TestNodes.clusterName(), port, "127.0.0.1:" + port, "changelog");
    v.putAll(overrides);
    return TestNodes.start(v);
  }

  /**
   * A broker of a test's own on {@code ports} (client, controller), logging to {@code dir}: closed
   * and started again with the same arguments, it comes back where the nodes look for it, with its
   * topics.
   */
  static EmbeddedKafkaBroker startBroker(Path dir, int[] ports) {
    String bootstrap = "127.0.0.1:" + ports[0];
    return EmbeddedKafkaBroker.start(dir, Map.of(
        "listeners", "PLAINTEXT://" + bootstrap + ",CONTROLLER://127.0.0.1:" + ports[1],
        "advertised.listeners", "PLAINTEXT://" + bootstrap,
        "controller.quorum.voters", "1@127.0.0.1:" + ports[1]));
  }

  static Connection jdbc(SharedInfra infra, String db) {
    return TestDatabases.jdbc(infra, db);
  }

  static java.util.List<String> strings(SharedInfra infra, String db, String sql) {
    return TestDatabases.strings(infra, db, sql);
  }

  static void sql(SharedInfra infra, String db, String... statements) {
    TestDatabases.sql(infra, db, statements);
  }

  static void awaitDecoded(SharedInfra infra, String db) {
    TestDatabases.awaitDecoded(infra, db);
  }

  static void awaitDecoded(String jdbcUrl, String user, String password) {
    TestDatabases.awaitDecoded(jdbcUrl, user, password);
  }

  static void await(String what, Duration timeout, BooleanSupplier condition) {
    Await.that(what, timeout, condition);
  }
}
