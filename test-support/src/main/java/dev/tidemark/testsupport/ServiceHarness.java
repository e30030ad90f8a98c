package dev.tidemark.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.contract.ToolCalls;
import dev.tidemark.devstack.FreePorts;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.sqlclient.Pool;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * One role's verticles against the suite's shared PostgreSQL and Kafka, called over a real
 * clustered event bus the way a gateway calls them: the role runs on one Vert.x cluster member,
 * and {@link #call} sends a {@link ToolRequest} from a second member, so every request and reply
 * crosses a socket and the wire codec. The integration tests of the query, command and changelog
 * modules use it, beside the code they test; whole nodes (the gateway, the CLI, dev mode, several
 * nodes) are tested in module {@code node}.
 *
 * <pre>{@code
 * harness = ServiceHarness.start(infra, "query", (vertx, config, pool, node) ->
 *     List.of(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool))), Map.of());
 * JsonObject row = harness.ok(ServiceHarness.READER, "get_row", new JsonObject().put("table", "customers").put("key", 1));
 * }</pre>
 */
public final class ServiceHarness implements AutoCloseable {

  /** The PostgreSQL database every harness of a test JVM serves: Tidemark's schema, the demo tables and both callers. */
  public static final String DATABASE = "tidemark_it";
  /** The login passwords of the two caller roles; statements of a call run under these logins. */
  public static final Map<String, String> CALLER_PASSWORDS = Map.of(
      DatabaseSetup.WRITER_ROLE, "it-writer-password", DatabaseSetup.READER_ROLE, "it-reader-password");
  /** A caller as the gateway names one after checking a read-write token. */
  public static final Caller WRITER = new Caller("it-writer", "integration tests (read-write)", DatabaseSetup.WRITER_ROLE,
      Access.READ_WRITE, List.of("*"));
  /** A caller as the gateway names one after checking a read-only token. */
  public static final Caller READER = new Caller("it-reader", "integration tests (read-only)", DatabaseSetup.READER_ROLE,
      Access.READ_ONLY, List.of("*"));

  private static final long CALL_TIMEOUT_MS = 60_000;
  private static final Set<String> PREPARED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** What a role deploys: its verticles, made for the harness's config, Tidemark's pool and the node they run on. */
  @FunctionalInterface
  public interface RoleVerticles {
    List<Deployable> create(Vertx vertx, TidemarkConfig config, Pool pool, NodeInfo node);
  }

  private final TidemarkConfig config;
  private final Vertx service;
  private final Vertx caller;
  private final Pool pool;

  private ServiceHarness(TidemarkConfig config, Vertx service, Vertx caller, Pool pool) {
    this.config = config;
    this.service = service;
    this.caller = caller;
    this.pool = pool;
  }

  /**
   * Prepares {@link #DATABASE} (once per test JVM), forms a cluster of two members on 127.0.0.1,
   * and deploys {@code verticles} on the first, in order, each once the one before it has started.
   *
   * @param roles the value of {@code node.roles} the verticles see in their config
   * @param overrides config values beside the harness's own (a database other than {@link #DATABASE}, a cache's length)
   */
  public static ServiceHarness start(SharedInfra infra, String roles, RoleVerticles verticles, Map<ConfigKey, String> overrides) {
    Map<ConfigKey, String> values = config(infra, roles);
    values.putAll(overrides);
    TidemarkConfig config = TidemarkConfig.from(values);
    prepare(infra, config);
    String cluster = "tidemark-harness-" + UUID.randomUUID().toString().substring(0, 8);
    int[] ports = FreePorts.allocate(2);
    Vertx service = await(clustered(cluster, ports[0], ports));
    Vertx caller;
    try {
      caller = await(clustered(cluster, ports[1], ports));
    } catch (RuntimeException e) {
      await(service.close());
      throw e;
    }
    Pool pool = Pools.create(service, config.database());
    ServiceHarness harness = new ServiceHarness(config, service, caller, pool);
    try {
      NodeInfo node = new NodeInfo("harness-" + cluster.substring(cluster.length() - 8), dev.tidemark.contract.Version.get(), config.roles(), () -> 2);
      Future<String> chain = Future.succeededFuture();
      for (Deployable verticle : verticles.create(service, config, pool, node)) {
        chain = chain.compose(x -> service.deployVerticle(verticle));
      }
      await(chain);
      return harness;
    } catch (RuntimeException e) {
      harness.close();
      throw e;
    }
  }

  /** The harness's config values for {@code roles}, before overrides: the shared servers, both callers' logins, ports chosen by the system. */
  public static Map<ConfigKey, String> config(SharedInfra infra, String roles) {
    Map<ConfigKey, String> v = new EnumMap<>(ConfigKey.class);
    v.put(ConfigKey.ROLES, roles);
    v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DATABASE));
    v.put(ConfigKey.DATABASE_USER, infra.postgres().user());
    v.put(ConfigKey.DATABASE_PASSWORD, infra.postgres().password());
    v.put(ConfigKey.DATABASE_CALLER_PASSWORDS, String.join(",", CALLER_PASSWORDS.entrySet().stream()
        .map(e -> e.getKey() + ":" + e.getValue()).sorted().toList()));
    v.put(ConfigKey.DATABASE_POOL_SIZE, "4");
    v.put(ConfigKey.KAFKA_BOOTSTRAP_SERVERS, infra.kafkaBootstrapServers());
    v.put(ConfigKey.CHANGELOG_RELAY_POLL_MS, "200");
    v.put(ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1");
    return v;
  }

  /**
   * Tidemark's schema, both callers' logins and the demo tables in {@link #DATABASE}, once per JVM:
   * for a test whose fixtures must exist before its role starts ({@link #start} prepares it too).
   */
  public static void prepareDatabase(SharedInfra infra) {
    prepareDatabase(infra, DATABASE);
  }

  /** {@link #prepareDatabase(SharedInfra)} for PostgreSQL database {@code db}, which a test class serves alone. */
  public static void prepareDatabase(SharedInfra infra, String db) {
    Map<ConfigKey, String> values = config(infra, "query");
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    prepare(infra, TidemarkConfig.from(values));
  }

  /** {@link #prepareDatabase(SharedInfra, String)}, then the test class's {@code fixtures}, run in order as the superuser. */
  public static void prepareDatabase(SharedInfra infra, String db, String... fixtures) {
    prepareDatabase(infra, db);
    TestDatabases.sql(infra, db, fixtures);
  }

  /** Closes each of {@code parts} that is not null, in order, every one even when one before it failed. */
  public static void closeAll(AutoCloseable... parts) {
    RuntimeException first = null;
    for (AutoCloseable part : parts) {
      try {
        if (part != null) {
          part.close();
        }
      } catch (Exception e) {
        if (first == null) {
          first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** A JDBC connection to {@link #DATABASE} as the superuser, for fixtures a caller cannot make. */
  public static Connection jdbc(SharedInfra infra) {
    return TestDatabases.jdbc(infra, DATABASE);
  }

  /** Tidemark's schema, both callers' logins and the demo tables in the PostgreSQL database {@code config} names, once per JVM. */
  static void prepare(SharedInfra infra, TidemarkConfig config) {
    String db = config.database().dbname();
    if (PREPARED.contains(db)) {
      return;
    }
    synchronized (PREPARED) {
      if (PREPARED.contains(db)) {
        return;
      }
      infra.postgres().createDatabaseIfMissing(db);
      Vertx vertx = Vertx.vertx();
      try {
        await(DatabaseSetup.prepare(Pools.create(vertx, config.database()), CALLER_PASSWORDS, true));
      } finally {
        await(vertx.close());
      }
      PREPARED.add(db);
    }
  }

  static Future<Vertx> clustered(String cluster, int port, int[] ports) {
    // as small as a cluster gets: TCP-IP on the loopback, no discovery, quick to notice a member gone
    Config hz = ConfigUtil.loadConfig();
    hz.setClusterName(cluster);
    hz.setProperty("hazelcast.phone.home.enabled", "false");
    hz.setProperty("hazelcast.shutdownhook.enabled", "false");
    hz.setProperty("hazelcast.logging.type", "slf4j");
    hz.setProperty("hazelcast.wait.seconds.before.join", "0");
    hz.setProperty("hazelcast.local.localAddress", "127.0.0.1");
    hz.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
    JoinConfig join = hz.getNetworkConfig().getJoin();
    join.getMulticastConfig().setEnabled(false);
    join.getAutoDetectionConfig().setEnabled(false);
    List<String> members = new ArrayList<>();
    for (int p : ports) {
      members.add("127.0.0.1:" + p);
    }
    join.getTcpIpConfig().setEnabled(true).setMembers(members);
    VertxOptions options = new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setPort(0));
    return Vertx.builder().with(options).withClusterManager(new HazelcastClusterManager(hz)).buildClustered();
  }

  /** The served database's name, as addresses and cursors carry it. */
  public String database() {
    return config.database().name();
  }

  /**
   * Calls {@code tool} as {@code who}, at the address of the service that runs it, and returns its
   * reply (a tool error is a reply too). The arguments go as sent: the schema checks a gateway makes
   * first are the gateway's, tested in module gateway.
   */
  public ToolReply call(Caller who, String tool, JsonObject arguments) {
    ToolDescriptor descriptor = ToolCatalog.find(tool).orElseThrow(() -> new IllegalArgumentException("no tool " + tool));
    ToolRequest request = new ToolRequest(UUID.randomUUID().toString(), database(), tool, arguments, who);
    return await(ToolCalls.ask(caller, Addresses.forService(descriptor.service(), database()), request, CALL_TIMEOUT_MS));
  }

  /** Calls {@code tool}, a tool a team defined, as {@code who}: its definition travels in the request, as a gateway sends it. */
  public ToolReply call(Caller who, NamedTool tool, JsonObject arguments) {
    ToolRequest request = new ToolRequest(UUID.randomUUID().toString(), database(), tool.name(), arguments, who).withNamed(tool);
    return await(ToolCalls.ask(caller, Addresses.forService(tool.kind().service(), database()), request, CALL_TIMEOUT_MS));
  }

  /** {@link #call} that must succeed: its structured content, checked against the tool's output schema. */
  public JsonObject ok(Caller who, String tool, JsonObject arguments) {
    ToolReply reply = call(who, tool, arguments);
    assertNull(reply.error(), () -> tool + " failed: " + reply.toJson().encode());
    assertNotNull(reply.structured(), () -> tool + " answered no structured content: " + reply.toJson().encode());
    OutputSchemas.assertFits(tool, reply.structured());
    return reply.structured();
  }

  /** {@link #call} that must fail with {@code code}: the error, checked against the tool's output schema. */
  public JsonObject error(Caller who, String tool, JsonObject arguments, String code) {
    ToolReply reply = call(who, tool, arguments);
    assertNotNull(reply.error(), () -> tool + " should fail with " + code + ": " + reply.toJson().encode());
    assertEquals(code, reply.error().getString("code"), reply.error()::encode);
    OutputSchemas.assertFits(tool, new JsonObject().put("error", reply.error()));
    return reply.error();
  }

  /** The entry of the result's array {@code field} whose {@code table} is {@code table} (a change tool's changes, a migration's tables). */
  public static JsonObject ofTable(JsonObject result, String field, String table) {
    for (Object o : result.getJsonArray(field)) {
      if (((JsonObject) o).getString("table").equals(table)) {
        return (JsonObject) o;
      }
    }
    throw new AssertionError(table + " is not in " + field + " of " + result.encode());
  }

  /** Undeploys the role, closes its pool and both cluster members. */
  @Override
  public void close() {
    try {
      await(service.close());
    } finally {
      await(caller.close());
    }
  }

  /** {@code future}'s result, within 90 s. */
  public static <T> T await(Future<T> future) {
    try {
      return future.toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("not done within 90 s", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
