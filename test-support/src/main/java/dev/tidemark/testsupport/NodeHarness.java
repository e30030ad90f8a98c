package dev.tidemark.testsupport;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.OAuth;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.contract.Role;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.database.toolserver.RunningRequests;
import dev.tidemark.devstack.FreePorts;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * A node as the gateway's integration tests need it: an MCP endpoint on a port of its own, in front
 * of the verticles of the roles behind it, on one member of a cluster of its own, against the
 * suite's shared PostgreSQL and Kafka, with the tokens of two callers (and OAuth access tokens when
 * the config turns OAuth on). The gateway module supplies the front ({@code GatewayFront}, in its
 * test sources) and the roles' verticles, as for {@link ServiceHarness}; the roles' own modules test
 * them over the event bus, without the gateway. What a node adds around them (the console, named
 * tools, the operations endpoint, several databases) is tested in module {@code node}, which starts
 * real nodes.
 *
 * <pre>{@code
 * harness = NodeHarness.start(infra, "gateway,query", GatewayFront::deploy, (vertx, config, pool, node) ->
 *     List.of(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool))), Map.of());
 * McpHttpClient client = harness.connect(NodeHarness.READ_ONLY_TOKEN);
 * }</pre>
 */
public final class NodeHarness implements AutoCloseable {

  /** The read-write caller's token: role {@code tidemark_writer}, every database. */
  public static final String READ_WRITE_TOKEN = "tmk_integrationTestsReadWrite0000000000";
  /** The read-only caller's token: role {@code tidemark_reader}, every database. */
  public static final String READ_ONLY_TOKEN = "tmk_integrationTestsReadOnly00000000000";

  private static final Set<String> TOKENS_PUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** What serves MCP in front of the roles, deployed on {@code vertx} last; completes with the port it listens on. */
  @FunctionalInterface
  public interface Front {
    Future<Integer> deploy(Vertx vertx, TidemarkConfig config, Authenticator auth, NodeInfo node);
  }

  private final Vertx vertx;
  private final int port;
  private final String nodeId;

  private NodeHarness(Vertx vertx, int port, String nodeId) {
    this.vertx = vertx;
    this.port = port;
    this.nodeId = nodeId;
  }

  /**
   * Prepares the database the config names (once per test JVM: Tidemark's schema, the demo tables,
   * both callers and their tokens), then deploys, on a cluster member of its own, the requests in
   * flight a service role answers for, {@code verticles} in order, and {@code front} last.
   *
   * @param roles the value of {@code node.roles}, {@code gateway} among them
   * @param overrides config values beside the harness's own (another database, a role's limits)
   */
  public static NodeHarness start(SharedInfra infra, String roles, Front front, ServiceHarness.RoleVerticles verticles,
      Map<ConfigKey, String> overrides) {
    Map<ConfigKey, String> values = ServiceHarness.config(infra, roles);
    values.put(ConfigKey.HTTP_HOST, "127.0.0.1");
    values.put(ConfigKey.HTTP_PORT, "0");
    values.putAll(overrides);
    TidemarkConfig config = TidemarkConfig.from(values);
    ServiceHarness.prepare(infra, config);
    String cluster = "tidemark-node-harness-" + UUID.randomUUID().toString().substring(0, 8);
    int port = FreePorts.allocate();
    Vertx vertx = ServiceHarness.await(ServiceHarness.clustered(cluster, port, new int[] {port}));
    try {
      Pool pool = Pools.create(vertx, config.database());
      ServiceHarness.await(putTokens(config.database().dbname(), pool));
      NodeInfo node = new NodeInfo("node-" + cluster.substring(cluster.length() - 8), dev.tidemark.contract.Version.get(),
          config.roles(), () -> 1);
      Authenticator tokens = TokenStore.create(pool).authenticator(vertx, Pools.connectOptions(config.defaultDatabase()));
      Authenticator auth = config.oauth().enabled() ? OAuth.authenticator(vertx, config.oauth(), tokens) : tokens;
      Future<?> chain = config.roles().contains(Role.QUERY) || config.roles().contains(Role.COMMAND)
          ? RunningRequests.serve(vertx) : Future.succeededFuture();
      for (Deployable verticle : verticles.create(vertx, config, pool, node)) {
        chain = chain.compose(x -> vertx.deployVerticle(verticle));
      }
      return new NodeHarness(vertx, ServiceHarness.await(chain.compose(x -> front.deploy(vertx, config, auth, node))), node.nodeId());
    } catch (RuntimeException e) {
      ServiceHarness.await(vertx.close());
      throw e;
    }
  }

  /** The two callers' tokens in PostgreSQL database {@code db}, once per test JVM, under the names dev mode gives them. */
  private static Future<Void> putTokens(String db, Pool pool) {
    if (TOKENS_PUT.contains(db)) {
      return Future.succeededFuture();
    }
    TokenStore tokens = TokenStore.create(pool);
    return tokens.put("dev-read-write", READ_WRITE_TOKEN, DatabaseSetup.WRITER_ROLE, Access.READ_WRITE, List.of("*"))
        .compose(x -> tokens.put("dev-read-only", READ_ONLY_TOKEN, DatabaseSetup.READER_ROLE, Access.READ_ONLY, List.of("*")))
        .onSuccess(x -> TOKENS_PUT.add(db))
        .mapEmpty();
  }

  /** The node id the roles report (in status, for one). */
  public String nodeId() {
    return nodeId;
  }

  /** The port the gateway listens on. */
  public int port() {
    return port;
  }

  /** The MCP endpoint's URL. */
  public String mcpUrl() {
    return "http://127.0.0.1:" + port + "/mcp";
  }

  /** A 2025-11-25 session with the gateway, initialized, as the caller of {@code token}. */
  public McpHttpClient connect(String token) {
    McpHttpClient client = new McpHttpClient(mcpUrl(), token);
    client.initialize();
    return client;
  }

  /** The headers of a 2025-11-25 GET stream of {@code c}'s session as the read-only caller, resumed after {@code lastEventId} unless null. */
  public static io.vertx.core.MultiMap streamHeaders(McpHttpClient c, String lastEventId) {
    io.vertx.core.MultiMap h = io.vertx.core.MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + READ_ONLY_TOKEN)
        .add("Accept", "text/event-stream")
        .add("Mcp-Session-Id", c.sessionId())
        .add("MCP-Protocol-Version", "2025-11-25");
    if (lastEventId != null) {
      h.add("Last-Event-ID", lastEventId);
    }
    return h;
  }

  /** The headers of a 2026-07-28 {@code subscriptions/listen} POST as the caller of {@code token}. */
  public static io.vertx.core.MultiMap listenHeaders(String token) {
    return io.vertx.core.MultiMap.caseInsensitiveMultiMap()
        .add("Authorization", "Bearer " + token)
        .add("Content-Type", "application/json")
        .add("Accept", "application/json, text/event-stream")
        .add("MCP-Protocol-Version", "2026-07-28")
        .add("Mcp-Method", "subscriptions/listen");
  }

  /** A 2026-07-28 {@code subscriptions/listen} request with id {@code id} for the resources {@code uris}. */
  public static io.vertx.core.json.JsonObject listenRequest(String id, List<String> uris) {
    return new io.vertx.core.json.JsonObject().put("jsonrpc", "2.0").put("id", id).put("method", "subscriptions/listen")
        .put("params", new io.vertx.core.json.JsonObject()
            .put("notifications", new io.vertx.core.json.JsonObject().put("resourceSubscriptions", new io.vertx.core.json.JsonArray(uris)))
            .put("_meta", new io.vertx.core.json.JsonObject().put("io.modelcontextprotocol/protocolVersion", "2026-07-28")
                .put("io.modelcontextprotocol/clientCapabilities", new io.vertx.core.json.JsonObject())));
  }

  /** Stops every verticle, closes the pool and leaves the cluster. */
  @Override
  public void close() {
    ServiceHarness.await(vertx.close());
  }
}
