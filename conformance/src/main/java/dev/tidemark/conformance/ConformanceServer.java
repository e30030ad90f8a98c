package dev.tidemark.conformance;

import dev.tidemark.auth.Tokens;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.node.TidemarkNode;
import dev.tidemark.node.dev.DevEnvironment;
import io.vertx.core.Future;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A node for the conformance suite: every role, the suite's fixtures, credentials off (the suite
 * sends none), bound to 127.0.0.1 only. {@code main} prints {@code Conformance server: <url>}.
 */
public final class ConformanceServer implements AutoCloseable {

  private final DevEnvironment environment;
  private final TidemarkNode node;

  private ConformanceServer(DevEnvironment environment, TidemarkNode node) {
    this.environment = environment;
    this.node = node;
  }

  /** @param postgresUrl, user, password, kafka: the parts to use; see {@link #startWithOwnParts} to start them too */
  public static Future<TidemarkNode> startNode(String postgresUrl, String user, String password, String kafka, int httpPort) {
    Map<ConfigKey, String> v = nodeConfig(postgresUrl, user, password, kafka, httpPort);
    v.put(ConfigKey.AUTH_ENABLED, "false");
    TidemarkConfig config = TidemarkConfig.from(v);
    return TidemarkNode.startWith(config, vertx -> List.of(new ConformanceFixtures(vertx), new ModernFixtures(), new TaskFixtures(vertx)));
  }

  /** A single node alone in its own cluster, on loopback; authentication as configured by default. */
  public static Map<ConfigKey, String> nodeConfig(String postgresUrl, String user, String password, String kafka, int httpPort) {
    Map<ConfigKey, String> v = new EnumMap<>(ConfigKey.class);
    int clusterPort = FreePorts.allocate();
    v.put(ConfigKey.HTTP_HOST, "127.0.0.1");
    v.put(ConfigKey.HTTP_PORT, String.valueOf(httpPort));
    v.put(ConfigKey.OPS_HOST, "127.0.0.1");
    v.put(ConfigKey.OPS_PORT, "0");
    v.put(ConfigKey.DATABASE_URL, postgresUrl);
    v.put(ConfigKey.DATABASE_USER, user);
    v.put(ConfigKey.DATABASE_PASSWORD, password);
    v.put(ConfigKey.DATABASE_CALLER_PASSWORDS, DevSetup.READER_ROLE + ":" + READER_PASSWORD + "," + DevSetup.WRITER_ROLE + ":" + WRITER_PASSWORD);
    v.put(ConfigKey.KAFKA_BOOTSTRAP_SERVERS, kafka);
    v.put(ConfigKey.CLUSTER_NAME, "tidemark-conformance-" + clusterPort);
    v.put(ConfigKey.CLUSTER_HOST, "127.0.0.1");
    v.put(ConfigKey.CLUSTER_PORT, String.valueOf(clusterPort));
    v.put(ConfigKey.CLUSTER_MEMBERS, "127.0.0.1:" + clusterPort);
    return v;
  }

  /** New for every run, like dev mode's: the caller roles' logins serve only this run's node. */
  private static final String READER_PASSWORD = Tokens.generate();
  private static final String WRITER_PASSWORD = Tokens.generate();

  /** Tidemark's schema and the caller roles' logins, which every node needs before it starts. */
  public static void prepare(String postgresUrl, String user, String password) throws Exception {
    prepare(postgresUrl, user, password, Tokens.generate());
  }

  /** Like {@link #prepare(String, String, String)}, with a read-write token the caller chose. */
  public static void prepare(String postgresUrl, String user, String password, String readWriteToken) throws Exception {
    Map<ConfigKey, String> v = new EnumMap<>(ConfigKey.class);
    v.put(ConfigKey.DATABASE_URL, postgresUrl);
    v.put(ConfigKey.DATABASE_USER, user);
    v.put(ConfigKey.DATABASE_PASSWORD, password);
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    try {
      io.vertx.sqlclient.Pool pool = dev.tidemark.database.Pools.create(vertx, TidemarkConfig.from(v).database());
      DevSetup.prepare(pool, readWriteToken, Tokens.generate(),
              Map.of(DevSetup.READER_ROLE, READER_PASSWORD, DevSetup.WRITER_ROLE, WRITER_PASSWORD))
          .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } finally {
      // closed outside the future chain: a future completed on a closing Vert.x would never reach its waiter
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  public static ConformanceServer startWithOwnParts(int httpPort) throws Exception {
    DevEnvironment env = DevEnvironment.start(null);
    try {
      prepare(env.postgres().url(DevEnvironment.DEMO_DATABASE), env.postgres().user(), env.postgres().password());
      TidemarkNode node = startNode(env.postgres().url(DevEnvironment.DEMO_DATABASE), env.postgres().user(), env.postgres().password(),
          env.kafka().bootstrapServers(), httpPort).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
      return new ConformanceServer(env, node);
    } catch (Exception e) {
      env.close();
      throw e;
    }
  }

  public String url() {
    return "http://localhost:" + node.httpPort() + "/mcp";
  }

  @Override
  public void close() throws Exception {
    try {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      environment.close();
    }
  }

  public static void main(String[] args) throws Exception {
    int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
    ConformanceServer server = startWithOwnParts(port);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        server.close();
      } catch (Exception e) {
        System.err.println("conformance server did not stop cleanly: " + e);
      }
      stopped.countDown();
    }));
    System.out.println("Conformance server: " + server.url());
    System.out.flush();
    stopped.await();
  }
}
