package dev.tidemark.config;

import dev.tidemark.contract.Role;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.PoolOptions;
import java.net.URI;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The whole configuration of one node, immutable, built once from resolved key values. */
public record TidemarkConfig(
    String nodeId,
    Set<Role> roles,
    HttpConfig http,
    OpsConfig ops,
    DatabaseConfig database,
    KafkaConfig kafka,
    ClusterConfig cluster,
    long busSendTimeoutMs,
    boolean authEnabled,
    CallLimits callLimits,
    ChangelogConfig changelog,
    CommandConfig command,
    long keysRefreshSeconds,
    String anonymousRole,
    LogConfig log,
    OAuthConfig oauth,
    Map<String, List<String>> roleTools,
    TracingConfig tracing,
    long drainTimeoutMs,
    EventsConfig events,
    SubscriptionLimits subscriptionLimits,
    WatchConfig watch,
    TasksConfig tasks,
    List<DatabaseConfig> databases,
    ConsoleConfig console) {

  public TidemarkConfig {
    roleTools = Map.copyOf(roleTools);
    databases = List.copyOf(databases);
  }

  /** The database {@code /mcp} serves: database.*, the first of {@link #databases()}. */
  public DatabaseConfig defaultDatabase() {
    return databases.get(0);
  }

  public List<String> databaseNames() {
    return databases.stream().map(DatabaseConfig::name).toList();
  }

  /**
   * The same config seen from database {@code name}: its {@link #database()} is that one, so that a
   * verticle of one database is deployed once per database without knowing of the others.
   */
  public TidemarkConfig forDatabase(String name) {
    DatabaseConfig db = databases.stream().filter(d -> d.name().equals(name)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no database named " + name + " is configured; the served ones are " + databaseNames()));
    return new TidemarkConfig(nodeId, roles, http, ops, db, kafka, cluster, busSendTimeoutMs, authEnabled, callLimits, changelog, command,
        keysRefreshSeconds, anonymousRole, log, oauth, roleTools, tracing, drainTimeoutMs, events, subscriptionLimits, watch, tasks, databases, console);
  }

  /**
   * The same config for instance {@code index} of {@code of} instances of a role's service: its
   * database's pool size is that instance's share of database.pool-size, so that the instances'
   * caller pools together open no more connections than one instance's would.
   */
  public TidemarkConfig forInstance(int index, int of) {
    if (of == 1) {
      return this;
    }
    int share = database.poolSize() / of + (index < database.poolSize() % of ? 1 : 0);
    DatabaseConfig db = database.withPoolSize(Math.max(1, share));
    return new TidemarkConfig(nodeId, roles, http, ops, db, kafka, cluster, busSendTimeoutMs, authEnabled, callLimits, changelog, command,
        keysRefreshSeconds, anonymousRole, log, oauth, roleTools, tracing, drainTimeoutMs, events, subscriptionLimits, watch, tasks, databases, console);
  }

  @Override
  public String toString() {
    return "TidemarkConfig[nodeId=" + nodeId + ", roles=" + roles + ", http=" + http + ", ops=" + ops + ", database=" + database
        + ", databases=" + databaseNames() + ", kafka=" + kafka + ", cluster=" + cluster + ", busSendTimeoutMs=" + busSendTimeoutMs + ", authEnabled=" + authEnabled + ", callLimits=" + callLimits + "]";
  }

  public record HttpConfig(String host, int port, String path, long maxBodyBytes, long bodyTimeoutMs, int idleTimeoutSeconds,
      int maxConnections, int maxUnauthenticatedConnections, List<String> allowedOrigins, String publicUrl) {

    /** The public URL of the endpoint for {@code database}, or of the default endpoint when it is null; null without http.public-url. */
    public String endpointUrl(String database) {
      return publicUrl.isEmpty() ? null : publicUrl + path + (database == null ? "" : "/" + database);
    }
  }

  /**
   * The OAuth 2.1 resource server's settings; {@link #enabled()} only with an issuer.
   *
   * @param audience empty: each endpoint's own public URL
   * @param jwksUrl empty: from the issuer's metadata
   */
  public record OAuthConfig(String issuer, String jwksUrl, String audience, String roleClaim, List<String> roles,
      long leewaySeconds, long jwksRefreshSeconds, long jwksMaxAgeSeconds) {

    /** The tool scopes: read tools, resources and completion need the first, change tools the second. */
    public static final String READ_SCOPE = "tidemark:read";
    public static final String WRITE_SCOPE = "tidemark:write";

    public boolean enabled() {
      return !issuer.isEmpty();
    }
  }

  /** How many tool calls one caller may run at once on a gateway, and how many may wait, for how long. */
  /**
   * @param callsPerMinute the cluster-wide budget of one caller's tool calls per minute; 0 for none
   * @param burst the calls of one counting window, whose length spreads the budget evenly; never above callsPerMinute
   */
  /**
   * @param perSession resources one 2025-11-25 session, or one listen stream, may subscribe to at once
   * @param perCaller subscriptions one caller may hold at once across the cluster
   */
  public record SubscriptionLimits(int perSession, int perCaller) {}

  /**
   * Tasks of the io.modelcontextprotocol/tasks extension.
   *
   * @param ttlMs how long a task is kept from its creation when its call asks for no ttl
   * @param maxTtlMs the longest a task is kept, whatever its call asks; a proposal's task is kept this long
   * @param promoteAfterMs how long a call that may become a task runs before it answers with one
   * @param pollIntervalMs the poll interval a running task suggests
   */
  public record TasksConfig(long ttlMs, long maxTtlMs, long promoteAfterMs, long pollIntervalMs) {}

  public record CallLimits(int maxConcurrent, int maxQueued, long queueTimeoutMs, int callsPerMinute, int burst) {

    public CallLimits {
      burst = burst == 0 ? callsPerMinute : burst;
    }

    public boolean rateLimited() {
      return callsPerMinute > 0;
    }

    /** How long one counting window of the rate limit lasts: burst calls are allowed in each. */
    public long windowMillis() {
      return 60_000L * burst / callsPerMinute;
    }
  }

  public record OpsConfig(String host, int port) {}

  /**
   * The console for people (console.*): off unless enabled.
   *
   * @param administrators people (a token's name, or oauth:&lt;subject&gt;) who administer it
   * @param oauthClientId the console's public client at the OAuth issuer; empty without an issuer
   */
  public record ConsoleConfig(boolean enabled, String path, List<String> administrators, long sessionSeconds, String oauthClientId) {

    public ConsoleConfig {
      administrators = List.copyOf(administrators);
    }

    public boolean isAdministrator(String person) {
      return administrators.contains(person);
    }
  }

  /** {@code format} is text or json; {@code level} the level of Tidemark's own loggers. */
  public record LogConfig(String format, String level) {}

  /**
   * {@code otlpEndpoint} is the OTLP/HTTP traces URL, empty when nothing is exported;
   * {@code sampleRatio} the share of new traces sampled, from 0 to 1.
   */
  public record TracingConfig(String otlpEndpoint, double sampleRatio, String serviceName) {

    public boolean exports() {
      return !otlpEndpoint.isEmpty();
    }
  }

  public record DatabaseConfig(
      String name,
      String host,
      int port,
      String dbname,
      String user,
      String password,
      int poolSize,
      long poolWaitMs,
      List<String> schemas,
      long statementTimeoutMs,
      long catalogCacheMs,
      Map<String, String> callerPasswords,
      String sslMode,
      String sslRootCert,
      List<String> approvalTables,
      List<String> reviewedFunctions,
      int callerSharePercent,
      List<String> approvers,
      Map<String, List<String>> tableApprovers,
      io.vertx.core.json.JsonObject namedTools,
      String toolsFile) {

    /** The values database.ssl-mode takes, in libpq's spelling. */
    public static final List<String> SSL_MODES = List.of("disable", "require", "verify-ca", "verify-full");

    public DatabaseConfig {
      callerPasswords = Map.copyOf(callerPasswords);
      approvalTables = List.copyOf(approvalTables);
      reviewedFunctions = List.copyOf(reviewedFunctions);
      approvers = List.copyOf(approvers);
      tableApprovers = Map.copyOf(tableApprovers);
      namedTools = namedTools == null ? new io.vertx.core.json.JsonObject() : namedTools.copy();
    }

    /**
     * Whether {@code person} may approve or reject a proposal that touches {@code tables} (schema.name):
     * an approver of the database (database.approvers), or of every one of those tables
     * (database.table-approvers, a table named as in database.approval-tables).
     */
    public boolean mayDecide(String person, List<String> tables) {
      if (approvers.contains(person)) {
        return true;
      }
      return !tables.isEmpty() && tables.stream().allMatch(table -> tableApprovers.entrySet().stream()
          .anyMatch(e -> (e.getKey().equals(table) || !e.getKey().contains(".") && table.endsWith("." + e.getKey()))
              && e.getValue().contains(person)));
    }

    /**
     * The named tools as written in database.tools, database.toolsets and database.consumers
     * ({@code {tools, toolsets, consumers}}, each absent when not set); see {@link #toolsFile()}.
     */
    @Override
    public io.vertx.core.json.JsonObject namedTools() {
      return namedTools.copy();
    }

    /** Whether a change to {@code table} (schema.name) needs a person's approval (database.approval-tables). */
    public boolean needsApproval(String table) {
      return approvalTables.stream().anyMatch(t -> t.equals(table) || !t.contains(".") && table.endsWith("." + t));
    }

    /** The same database with pools of {@code size} connections. */
    public DatabaseConfig withPoolSize(int size) {
      return new DatabaseConfig(name, host, port, dbname, user, password, size, poolWaitMs, schemas, statementTimeoutMs, catalogCacheMs,
          callerPasswords, sslMode, sslRootCert, approvalTables, reviewedFunctions, callerSharePercent, approvers, tableApprovers, namedTools, toolsFile);
    }

    /** The most connections of one of these pools (of {@link #poolSize()}) one caller holds at once: database.caller-share-percent, at least one. */
    public int perCaller() {
      return Math.max(1, Math.min(poolSize, poolSize * callerSharePercent / 100));
    }

    /**
     * The same TLS settings for a PgJDBC connection (the replication slot's reader), as driver
     * properties: PgJDBC takes libpq's modes; without a root certificate, verification uses the
     * JVM's trusted authorities, as the reactive connections do.
     */
    public Map<String, String> jdbcSslProperties() {
      if (sslMode.equals("disable")) {
        return Map.of("sslmode", "disable");
      }
      if (sslMode.equals("require")) {
        return Map.of("sslmode", "require", "sslfactory", "org.postgresql.ssl.NonValidatingFactory");
      }
      return sslRootCert.isEmpty()
          ? Map.of("sslmode", sslMode, "sslfactory", "org.postgresql.ssl.DefaultJavaSSLFactory")
          : Map.of("sslmode", sslMode, "sslrootcert", sslRootCert);
    }

    /**
     * The options of a pool named {@code name} (its pool_name metrics label): every pool, Tidemark's
     * own and the callers', has {@code database.pool-size} connections, and a call that finds them all
     * busy fails after {@code database.pool-wait-ms}, having run nothing.
     */
    public PoolOptions poolOptions(String name) {
      return new PoolOptions().setMaxSize(poolSize).setName(name)
          .setConnectionTimeout((int) Math.min(poolWaitMs, Integer.MAX_VALUE)).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
    }

    /**
     * How one login connects: every connection Tidemark opens to the served database, its own and
     * each caller role's, is built here so that all of them use the same TLS settings.
     */
    public PgConnectOptions connectOptions(String login, String loginPassword, String applicationName) {
      PgConnectOptions options = new PgConnectOptions()
          .setHost(host)
          .setPort(port)
          .setDatabase(dbname)
          .setUser(login)
          .setPassword(loginPassword)
          .addProperty("application_name", applicationName);
      switch (sslMode) {
        case "require" -> options.setSslMode(SslMode.REQUIRE).setSslOptions(new ClientSSLOptions().setTrustAll(true));
        case "verify-ca", "verify-full" -> {
          ClientSSLOptions ssl = new ClientSSLOptions()
              // verify-ca checks the chain only; verify-full also checks the host, as libpq does
              .setHostnameVerificationAlgorithm(sslMode.equals("verify-full") ? "HTTPS" : "");
          if (!sslRootCert.isEmpty()) {
            ssl.setTrustOptions(new PemTrustOptions().addCertPath(sslRootCert));
          }
          options.setSslMode(sslMode.equals("verify-full") ? SslMode.VERIFY_FULL : SslMode.VERIFY_CA).setSslOptions(ssl);
        }
        default -> options.setSslMode(SslMode.DISABLE);
      }
      return options;
    }

    /** The login password of caller role {@code role}, or null when none is configured. */
    public String callerPassword(String role) {
      return callerPasswords.get(role);
    }

    @Override
    public String toString() {
      // never print the password
      return "DatabaseConfig[name=" + name + ", host=" + host + ", port=" + port + ", dbname=" + dbname
          + ", user=" + user + ", poolSize=" + poolSize + ", poolWaitMs=" + poolWaitMs + ", schemas=" + schemas + ", callerRoles=" + callerPasswords.keySet()
          + ", sslMode=" + sslMode + "]";
    }
  }

  /**
   * @param security the Kafka client settings for TLS and SASL, with the JAAS line holding the SASL
   *     password: never print them
   */
  public record KafkaConfig(
      String bootstrapServers, String topicPrefix, int topicPartitions, short topicReplicationFactor, long requestTimeoutMs,
      Map<String, String> security) {

    public KafkaConfig {
      security = Map.copyOf(security);
    }

    public String topicFor(String database) {
      return topicPrefix + database;
    }

    /** What every Kafka client of Tidemark's starts from: the brokers, and how to reach them safely. */
    public Map<String, Object> clientProperties() {
      Map<String, Object> props = new java.util.HashMap<>(security);
      props.put("bootstrap.servers", bootstrapServers);
      return props;
    }

    @Override
    public String toString() {
      return "KafkaConfig[bootstrapServers=" + bootstrapServers + ", topicPrefix=" + topicPrefix + ", securityProtocol="
          + security.getOrDefault("security.protocol", "PLAINTEXT") + "]";
    }
  }

  /** The changelog role's capture, relay and retention settings. */
  /** The command role: plan ids, idempotency keys, who may commit without a plan and who may migrate. */
  public record CommandConfig(long planTtlSeconds, long idempotencyRetentionHours, List<String> directCommitRoles, List<String> migrateRoles) {
    public CommandConfig {
      directCommitRoles = List.copyOf(directCommitRoles);
      migrateRoles = List.copyOf(migrateRoles);
    }
  }

  /**
   * The events tools: dead letters, share consumers per node, who may move a consumer, the quotas of
   * consumers per caller and per role, and when idle consumers and share consumers are removed.
   *
   * @param consumerIdleSeconds 0: consumers are never removed for idleness
   */
  public record EventsConfig(int maxDeliveries, int consumersPerNode, boolean brokerDeadLetters, List<String> adminRoles,
      int maxConsumersPerCaller, int maxConsumersPerRole, long consumerIdleSeconds, long consumerSweepSeconds, long workerIdleSeconds,
      int maxWorkersPerCaller) {
    public EventsConfig {
      adminRoles = List.copyOf(adminRoles);
    }
  }

  /** How many watch calls may wait at once: per caller on a query node, per session on a gateway. */
  public record WatchConfig(int maxWaitingPerCaller, int maxWaitingPerSession) {}

  public record ChangelogConfig(
      long retentionSeconds, long pruneIntervalSeconds, int relayBatchSize, long relayBatchBytes, long relayPollMs, long reconcileSeconds,
      long maxSlotLagBytes) {}

  public record ClusterConfig(
      String name,
      String host,
      int port,
      List<String> members,
      String kubernetesServiceDns,
      int joinWaitSeconds,
      String eventBusHost,
      int eventBusPort,
      int eventLoops,
      int queryInstances,
      int commandInstances,
      int gatewayInstances) {

    /** The event loops of a node: node.event-loops, or one per core the JVM sees. */
    public int loops() {
      return eventLoops > 0 ? eventLoops : Runtime.getRuntime().availableProcessors();
    }

    /**
     * How many instances of a role's service a node runs, from {@code configured}: never more than
     * {@code poolSize}, since each instance's caller pools get a share of it ({@link
     * TidemarkConfig#forInstance}) and a share holds at least one connection. 0 means one per event
     * loop, as long as each share keeps {@link #CONNECTIONS_PER_INSTANCE} connections: calls go to
     * the instances in turn, and a small share would make a call wait for a busy connection while
     * another instance has idle ones.
     */
    public int instances(int configured, int poolSize) {
      int wanted = configured > 0 ? configured : Math.min(loops(), poolSize / CONNECTIONS_PER_INSTANCE);
      return Math.max(1, Math.min(wanted, poolSize));
    }

    /**
     * How many instances of the MCP endpoint a gateway node runs: node.gateway-instances, or one per
     * event loop. Unlike the services', an instance holds no connection of its own, so nothing caps it.
     */
    public int gatewayInstanceCount() {
      return gatewayInstances > 0 ? gatewayInstances : loops();
    }

    /** The fewest connections of each caller pool an instance gets when the number of instances is not configured. */
    public static final int CONNECTIONS_PER_INSTANCE = 4;
  }

  /** Builds the config from a value for every key; a missing key takes its default. */
  public static TidemarkConfig from(Map<ConfigKey, String> given) {
    Values v = new Values(given);
    boolean authEnabled = v.bool(ConfigKey.AUTH_ENABLED);
    String httpHost = v.str(ConfigKey.HTTP_HOST);
    if (!authEnabled && !isLoopback(httpHost)) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ENABLED.key() + " may only be false when "
          + ConfigKey.HTTP_HOST.key() + " is a loopback address such as 127.0.0.1");
    }
    refuseContradictions(v, authEnabled);
    String publicUrl = v.publicUrl();
    OAuthConfig oauth = v.oauth(publicUrl);
    if (oauth.enabled() && !authEnabled) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_OAUTH_ISSUER.key() + " needs " + ConfigKey.AUTH_ENABLED.key()
          + " true: without authentication no token is read");
    }
    DatabaseConfig main = v.database();
    List<DatabaseConfig> databases = v.databases(main);
    return new TidemarkConfig(
        v.str(ConfigKey.NODE_ID),
        v.roles(),
        new HttpConfig(
            httpHost,
            v.port(ConfigKey.HTTP_PORT),
            v.path(ConfigKey.HTTP_PATH),
            v.positiveLong(ConfigKey.HTTP_MAX_BODY_BYTES),
            v.positiveLong(ConfigKey.HTTP_BODY_TIMEOUT_MS),
            v.positiveInt(ConfigKey.HTTP_IDLE_TIMEOUT_SECONDS),
            v.positiveInt(ConfigKey.HTTP_MAX_CONNECTIONS),
            v.positiveInt(ConfigKey.HTTP_MAX_UNAUTHENTICATED_CONNECTIONS),
            v.list(ConfigKey.HTTP_ALLOWED_ORIGINS),
            publicUrl),
        new OpsConfig(v.str(ConfigKey.OPS_HOST), v.port(ConfigKey.OPS_PORT)),
        main,
        new KafkaConfig(
            v.str(ConfigKey.KAFKA_BOOTSTRAP_SERVERS),
            v.str(ConfigKey.KAFKA_TOPIC_PREFIX),
            v.positiveInt(ConfigKey.KAFKA_TOPIC_PARTITIONS),
            (short) v.positiveInt(ConfigKey.KAFKA_TOPIC_REPLICATION_FACTOR, Short.MAX_VALUE),
            v.positiveLong(ConfigKey.KAFKA_REQUEST_TIMEOUT_MS),
            v.kafkaSecurity()),
        new ClusterConfig(
            v.str(ConfigKey.CLUSTER_NAME),
            v.str(ConfigKey.CLUSTER_HOST),
            v.port(ConfigKey.CLUSTER_PORT),
            v.list(ConfigKey.CLUSTER_MEMBERS),
            v.str(ConfigKey.CLUSTER_KUBERNETES_SERVICE_DNS),
            v.nonNegativeInt(ConfigKey.CLUSTER_JOIN_WAIT_SECONDS),
            v.str(ConfigKey.CLUSTER_EVENT_BUS_HOST),
            v.port(ConfigKey.CLUSTER_EVENT_BUS_PORT),
            v.nonNegativeInt(ConfigKey.NODE_EVENT_LOOPS),
            v.nonNegativeInt(ConfigKey.NODE_QUERY_INSTANCES),
            v.nonNegativeInt(ConfigKey.NODE_COMMAND_INSTANCES),
            v.nonNegativeInt(ConfigKey.NODE_GATEWAY_INSTANCES)),
        v.positiveLong(ConfigKey.BUS_SEND_TIMEOUT_MS),
        authEnabled,
        new CallLimits(
            v.positiveInt(ConfigKey.AUTH_MAX_CONCURRENT_CALLS),
            v.nonNegativeInt(ConfigKey.AUTH_MAX_QUEUED_CALLS),
            v.positiveLong(ConfigKey.AUTH_QUEUE_TIMEOUT_MS),
            v.nonNegativeInt(ConfigKey.AUTH_RATE_LIMIT_CALLS_PER_MINUTE),
            v.rateLimitBurst()),
        new ChangelogConfig(
            v.positiveLong(ConfigKey.CHANGELOG_RETENTION_SECONDS),
            v.positiveLong(ConfigKey.CHANGELOG_PRUNE_INTERVAL_SECONDS),
            v.positiveInt(ConfigKey.CHANGELOG_RELAY_BATCH_SIZE, 100_000),
            v.positiveLong(ConfigKey.CHANGELOG_RELAY_BATCH_BYTES),
            v.positiveLong(ConfigKey.CHANGELOG_RELAY_POLL_MS),
            v.positiveLong(ConfigKey.CHANGELOG_RECONCILE_SECONDS),
            v.positiveLong(ConfigKey.CHANGELOG_MAX_SLOT_LAG_BYTES)),
        new CommandConfig(
            v.positiveLong(ConfigKey.PLAN_TTL_SECONDS),
            v.positiveLong(ConfigKey.IDEMPOTENCY_RETENTION_HOURS),
            v.list(ConfigKey.COMMAND_DIRECT_COMMIT_ROLES),
            v.list(ConfigKey.COMMAND_MIGRATE_ROLES)),
        v.positiveLong(ConfigKey.KEYS_REFRESH_SECONDS),
        v.str(ConfigKey.AUTH_ANONYMOUS_ROLE),
        new LogConfig(v.oneOf(ConfigKey.LOG_FORMAT, "text", "json"), v.oneOf(ConfigKey.LOG_LEVEL, "error", "warn", "info", "debug", "trace")),
        oauth,
        v.roleTools(),
        new TracingConfig(v.httpUrlOrEmpty(ConfigKey.TRACING_OTLP_ENDPOINT), v.ratio(ConfigKey.TRACING_SAMPLE_RATIO),
            v.nonEmpty(ConfigKey.TRACING_SERVICE_NAME)),
        v.positiveLong(ConfigKey.NODE_DRAIN_TIMEOUT_MS),
        new EventsConfig(v.positiveInt(ConfigKey.EVENTS_MAX_DELIVERIES, 9), v.positiveInt(ConfigKey.EVENTS_CONSUMERS_PER_NODE, 64),
            v.bool(ConfigKey.EVENTS_BROKER_DEAD_LETTERS), v.list(ConfigKey.EVENTS_ADMIN_ROLES),
            v.positiveInt(ConfigKey.EVENTS_MAX_CONSUMERS_PER_CALLER), v.positiveInt(ConfigKey.EVENTS_MAX_CONSUMERS_PER_ROLE),
            v.nonNegativeLong(ConfigKey.EVENTS_CONSUMER_IDLE_SECONDS), v.positiveLong(ConfigKey.EVENTS_CONSUMER_SWEEP_SECONDS),
            v.positiveLong(ConfigKey.EVENTS_WORKER_IDLE_SECONDS), v.positiveInt(ConfigKey.EVENTS_MAX_WORKERS_PER_CALLER)),
        new SubscriptionLimits(v.positiveInt(ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_SESSION),
            v.positiveInt(ConfigKey.RESOURCES_MAX_SUBSCRIPTIONS_PER_CALLER)),
        new WatchConfig(v.positiveInt(ConfigKey.WATCH_MAX_WAITING_PER_CALLER), v.positiveInt(ConfigKey.WATCH_MAX_WAITING_PER_SESSION)),
        v.tasks(),
        databases,
        v.console(authEnabled, oauth, databases));
  }

  /** Keys that are each valid but cannot hold together: the node would fail later, and less clearly. */
  private static void refuseContradictions(Values v, boolean authEnabled) {
    Set<Role> roles = v.roles();
    Map<Integer, ConfigKey> ports = new java.util.HashMap<>();
    List<ConfigKey> bound = new java.util.ArrayList<>(List.of(ConfigKey.OPS_PORT, ConfigKey.CLUSTER_PORT, ConfigKey.CLUSTER_EVENT_BUS_PORT));
    if (roles.contains(Role.GATEWAY)) {
      bound.add(0, ConfigKey.HTTP_PORT);
    }
    for (ConfigKey k : bound) {
      int port = v.port(k);
      ConfigKey other = port == 0 ? null : ports.putIfAbsent(port, k);
      if (other != null) {
        throw new IllegalArgumentException("config keys " + other.key() + " and " + k.key() + " are both " + port
            + ": one node cannot listen twice on one port; give " + k.key() + " (" + k.envName() + ") another");
      }
    }
    if (!authEnabled && v.str(ConfigKey.AUTH_ANONYMOUS_ROLE).equals(v.str(ConfigKey.DATABASE_USER))) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ANONYMOUS_ROLE.key() + " may not be "
          + ConfigKey.DATABASE_USER.key() + " (" + v.str(ConfigKey.DATABASE_USER) + "): callers never run as Tidemark's own login");
    }
  }

  /**
   * Loopback names and addresses: what only this machine can reach. Exactly {@code localhost}, an
   * IPv4 literal in 127.0.0.0/8 and {@code ::1} (bare or bracketed). Parsed, never matched by
   * prefix ({@code 127.0.0.1.evil.example} is a DNS name anyone can point anywhere) and never
   * resolved (a lookup would ask the attacker's name server).
   */
  public static boolean isLoopback(String host) {
    if (host == null) {
      return false;
    }
    String h = host.toLowerCase(java.util.Locale.ROOT);
    return h.equals("localhost") || h.equals("::1") || h.equals("[::1]") || isLoopbackIpv4(h);
  }

  /** Four decimal octets of 0 to 255, without leading zeros (some parsers read those as octal), the first 127. */
  private static boolean isLoopbackIpv4(String h) {
    String[] octets = h.split("\\.", -1);
    if (octets.length != 4) {
      return false;
    }
    for (String octet : octets) {
      if (octet.isEmpty() || octet.length() > 3 || (octet.length() > 1 && octet.charAt(0) == '0')) {
        return false;
      }
      for (int i = 0; i < octet.length(); i++) {
        if (octet.charAt(i) < '0' || octet.charAt(i) > '9') {
          return false;
        }
      }
      if (Integer.parseInt(octet) > 255) {
        return false;
      }
    }
    return octets[0].equals("127");
  }

  /** Parses values and names the key in every error, so that a bad setting is easy to find. */
  private record Values(Map<ConfigKey, String> given, String entry) {

    private static final String DATABASE_PREFIX = "database.";

    Values(Map<ConfigKey, String> given) {
      this(given, null);
    }

    /** @param entry the entry of databases these values are of, or null for the top level */
    Values {
      given = given.isEmpty() ? new EnumMap<>(ConfigKey.class) : new EnumMap<>(given);
    }

    /** The database.* keys as one served database. */
    DatabaseConfig database() {
      URI url = uri(ConfigKey.DATABASE_URL);
      String dbname = url.getPath() == null || url.getPath().length() <= 1 ? "postgres" : url.getPath().substring(1);
      return new DatabaseConfig(
          name(ConfigKey.DATABASE_NAME),
          url.getHost(),
          url.getPort() < 0 ? 5432 : url.getPort(),
          dbname,
          str(ConfigKey.DATABASE_USER),
          str(ConfigKey.DATABASE_PASSWORD),
          positiveInt(ConfigKey.DATABASE_POOL_SIZE),
          positiveLong(ConfigKey.DATABASE_POOL_WAIT_MS),
          list(ConfigKey.DATABASE_SCHEMAS),
          positiveLong(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS),
          nonNegativeLong(ConfigKey.DATABASE_CATALOG_CACHE_MS),
          callerPasswords(),
          sslMode(),
          readableFileOrEmpty(ConfigKey.DATABASE_SSL_ROOT_CERT),
          list(ConfigKey.DATABASE_APPROVAL_TABLES),
          functions(ConfigKey.DATABASE_REVIEWED_FUNCTIONS),
          positiveInt(ConfigKey.DATABASE_CALLER_SHARE_PERCENT, 100),
          list(ConfigKey.DATABASE_APPROVERS),
          tableApprovers(),
          namedTools(),
          toolsFile());
    }

    /**
     * database.tools, database.toolsets and database.consumers as one section. Only their shape is
     * checked here: an entry that is not a valid tool is left out when the tools load, and the
     * node serves the rest.
     */
    io.vertx.core.json.JsonObject namedTools() {
      io.vertx.core.json.JsonObject section = new io.vertx.core.json.JsonObject();
      Object[][] keys = {{ConfigKey.DATABASE_TOOLS, "tools", true}, {ConfigKey.DATABASE_TOOLSETS, "toolsets", false},
          {ConfigKey.DATABASE_CONSUMERS, "consumers", true}};
      for (Object[] k : keys) {
        ConfigKey key = (ConfigKey) k[0];
        String text = str(key);
        if (text.isEmpty()) {
          continue;
        }
        boolean list = (Boolean) k[2];
        Object value;
        try {
          value = io.vertx.core.json.Json.decodeValue(text);
        } catch (io.vertx.core.json.DecodeException e) {
          value = null;
        }
        if (list ? !(value instanceof io.vertx.core.json.JsonArray) : !(value instanceof io.vertx.core.json.JsonObject)) {
          throw fail(key, list ? "a list of entries (a JSON array in " + key.envName() + ")"
              : "a mapping of names to lists of tool names (a JSON object in " + key.envName() + ")");
        }
        section.put((String) k[1], value);
      }
      return section;
    }

    /** database.tools-file: a readable file, and then none of the inline keys. */
    String toolsFile() {
      String file = readableFileOrEmpty(ConfigKey.DATABASE_TOOLS_FILE);
      if (!file.isEmpty()) {
        for (ConfigKey inline : List.of(ConfigKey.DATABASE_TOOLS, ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS)) {
          if (!str(inline).isEmpty()) {
            throw contradiction(inline, ConfigKey.DATABASE_TOOLS_FILE, "is not read when " + ConfigKey.DATABASE_TOOLS_FILE.key()
                + " is set: move the entries into that file");
          }
        }
      }
      return file;
    }

    /**
     * {@code main} and then each entry of {@code databases}: an entry sets database.* keys by their
     * last part and takes every other one from database.*. Two databases may share neither a name
     * nor a PostgreSQL database (they would share its slot and changelog).
     */
    List<DatabaseConfig> databases(DatabaseConfig main) {
      List<DatabaseConfig> out = new java.util.ArrayList<>(List.of(main));
      String text = str(ConfigKey.DATABASES);
      if (text.isEmpty()) {
        return out;
      }
      com.fasterxml.jackson.databind.JsonNode entries;
      try {
        entries = new com.fasterxml.jackson.databind.ObjectMapper()
            .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION).readTree(text);
      } catch (java.io.IOException e) {
        throw fail(ConfigKey.DATABASES, "a list of entries (a JSON array of objects in " + ConfigKey.DATABASES.envName() + ")");
      }
      if (entries == null || !entries.isArray()) {
        throw fail(ConfigKey.DATABASES, "a list of entries (a JSON array of objects in " + ConfigKey.DATABASES.envName() + ")");
      }
      for (int i = 0; i < entries.size(); i++) {
        DatabaseConfig db = entry(i, entries.get(i)).database();
        for (DatabaseConfig other : out) {
          if (other.name().equals(db.name())) {
            throw fail(ConfigKey.DATABASES, "a list of databases with names of their own; " + db.name() + " is named twice");
          }
          if (other.host().equals(db.host()) && other.port() == db.port() && other.dbname().equals(db.dbname())) {
            throw fail(ConfigKey.DATABASES, "a list of databases of their own; " + db.name() + " and " + other.name()
                + " are both " + db.host() + ":" + db.port() + "/" + db.dbname());
          }
        }
        out.add(db);
      }
      return out;
    }

    /** The keys of entry {@code i}: database.* with the entry's own values over them. */
    private Values entry(int i, com.fasterxml.jackson.databind.JsonNode node) {
      String label = ConfigKey.DATABASES.key() + "[" + i + "]";
      if (!node.isObject()) {
        throw new IllegalArgumentException("config key " + label + " must be a mapping of database keys, such as {name: sales, url: ...}");
      }
      Map<ConfigKey, String> values = new EnumMap<>(given);
      // a database's tools are its own: their statements name its tables, so no entry inherits the default database's
      List.of(ConfigKey.DATABASE_TOOLS, ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS, ConfigKey.DATABASE_TOOLS_FILE)
          .forEach(values::remove);
      Iterator<String> names = node.fieldNames();
      while (names.hasNext()) {
        String sub = names.next();
        ConfigKey k = ConfigKey.byKey(DATABASE_PREFIX + sub);
        com.fasterxml.jackson.databind.JsonNode value = node.get(sub);
        if (k == null) {
          throw new IllegalArgumentException("config key " + label + " has an unknown key '" + sub + "'; an entry may set "
              + String.join(", ", entryKeys()));
        }
        values.put(k, ConfigLoader.SECTIONS.contains(k) && value.isContainerNode() ? value.toString()
            : ConfigLoader.plain(value, "config key " + label + "." + sub));
      }
      if (!node.has("name") || !node.has("url")) {
        throw new IllegalArgumentException("config key " + label + " must set name and url; the rest is taken from database.*");
      }
      if (node.has("password-file")) {
        String file = values.get(ConfigKey.DATABASE_PASSWORD_FILE).trim();
        try {
          values.put(ConfigKey.DATABASE_PASSWORD, java.nio.file.Files.readString(java.nio.file.Path.of(file),
              java.nio.charset.StandardCharsets.UTF_8).strip());
        } catch (java.io.IOException e) {
          throw new IllegalArgumentException("config key " + label + ".password-file: cannot read " + file + " (" + e.getMessage() + ")");
        }
      }
      return new Values(values, label + " (" + node.get("name").asText() + ")");
    }

    /** What an entry of databases may set: every database.* key by its last part. */
    static List<String> entryKeys() {
      return Arrays.stream(ConfigKey.values()).map(ConfigKey::key).filter(key -> key.startsWith(DATABASE_PREFIX))
          .map(key -> key.substring(DATABASE_PREFIX.length())).toList();
    }

    String str(ConfigKey k) {
      String value = given.get(k);
      return (value == null ? k.defaultValue() : value).trim();
    }

    List<String> list(ConfigKey k) {
      String s = str(k);
      return s.isEmpty() ? List.of() : Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
    }

    /** Functions as schema.name or schema.*: the check matches them against pg_proc's schema and name exactly. */
    List<String> functions(ConfigKey k) {
      List<String> out = list(k);
      for (String f : out) {
        int dot = f.indexOf('.');
        if (dot <= 0 || dot == f.length() - 1 || f.indexOf('.', dot + 1) >= 0 || f.contains("(") || f.contains(" ")) {
          throw fail(k, "a comma-separated list of schema.name or schema.* (a function of every overload, or every function of a"
              + " schema, unquoted and as PostgreSQL stores the names)");
        }
      }
      return out;
    }

    long nonNegativeLong(ConfigKey k) {
      try {
        long value = Long.parseLong(str(k));
        if (value < 0) {
          throw fail(k, "a number of 0 or more");
        }
        return value;
      } catch (NumberFormatException e) {
        throw fail(k, "a whole number");
      }
    }

    /** The tasks' settings; a ttl longer than the most a task may be kept would never be given. */
    TasksConfig tasks() {
      long ttl = positiveLong(ConfigKey.TASKS_TTL_MS);
      long max = positiveLong(ConfigKey.TASKS_MAX_TTL_MS);
      if (ttl > max) {
        throw fail(ConfigKey.TASKS_TTL_MS, "a number no larger than " + ConfigKey.TASKS_MAX_TTL_MS.key() + " (" + max + ")");
      }
      return new TasksConfig(ttl, max, nonNegativeLong(ConfigKey.TASKS_PROMOTE_AFTER_MS), positiveLong(ConfigKey.TASKS_POLL_INTERVAL_MS));
    }

    /** The burst, never above the minute's budget (that would be a window longer than a minute); 0 for the whole budget. */
    int rateLimitBurst() {
      int perMinute = nonNegativeInt(ConfigKey.AUTH_RATE_LIMIT_CALLS_PER_MINUTE);
      int burst = nonNegativeInt(ConfigKey.AUTH_RATE_LIMIT_BURST);
      if (burst > perMinute) {
        throw fail(ConfigKey.AUTH_RATE_LIMIT_BURST, "a number no larger than auth.rate-limit.calls-per-minute (" + perMinute + ")");
      }
      return burst;
    }

    int nonNegativeInt(ConfigKey k) {
      long value = nonNegativeLong(k);
      if (value > Integer.MAX_VALUE) {
        throw fail(k, "a number of at most " + Integer.MAX_VALUE);
      }
      return (int) value;
    }

    int positiveInt(ConfigKey k) {
      return positiveInt(k, Integer.MAX_VALUE);
    }

    int positiveInt(ConfigKey k, int max) {
      long value = positiveLong(k);
      if (value > max) {
        throw fail(k, "a number from 1 to " + max);
      }
      return (int) value;
    }

    long positiveLong(ConfigKey k) {
      long value = nonNegativeLong(k);
      if (value == 0) {
        throw fail(k, "a number above 0");
      }
      return value;
    }

    int port(ConfigKey k) {
      long value = nonNegativeLong(k);
      if (value > 65535) {
        throw fail(k, "a port between 0 and 65535");
      }
      return (int) value;
    }

    boolean bool(ConfigKey k) {
      String s = str(k);
      if (s.equals("true") || s.equals("false")) {
        return Boolean.parseBoolean(s);
      }
      throw fail(k, "true or false");
    }

    String oneOf(ConfigKey k, String... allowed) {
      String s = str(k);
      if (!Arrays.asList(allowed).contains(s)) {
        throw fail(k, "one of " + String.join(", ", allowed));
      }
      return s;
    }

    /** An http or https URL with a host, or nothing. */
    String httpUrlOrEmpty(ConfigKey k) {
      String s = str(k);
      if (s.isEmpty()) {
        return s;
      }
      try {
        URI uri = URI.create(s);
        if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
          return s;
        }
      } catch (IllegalArgumentException e) {
        // reported below
      }
      throw fail(k, "an http:// or https:// URL such as http://otel-collector:4318/v1/traces, or nothing");
    }

    double ratio(ConfigKey k) {
      try {
        double value = Double.parseDouble(str(k));
        if (value >= 0 && value <= 1) {
          return value;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw fail(k, "a number from 0 to 1, such as 0.1");
    }

    String nonEmpty(ConfigKey k) {
      String s = str(k);
      if (s.isEmpty()) {
        throw fail(k, "a name");
      }
      return s;
    }

    String path(ConfigKey k) {
      String s = str(k);
      if (!s.matches("/[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*")) {
        throw fail(k, "an absolute path such as /mcp");
      }
      return s;
    }

    String name(ConfigKey k) {
      String s = str(k);
      if (!s.matches("[a-z][a-z0-9_-]{0,62}")) {
        throw fail(k, "a lower-case name of letters, digits, '_' and '-'");
      }
      return s;
    }

    URI uri(ConfigKey k) {
      URI uri;
      try {
        uri = URI.create(str(k));
      } catch (IllegalArgumentException e) {
        throw fail(k, "a URL such as postgresql://host:5432/dbname");
      }
      if (!"postgresql".equals(uri.getScheme()) && !"postgres".equals(uri.getScheme()) || uri.getHost() == null) {
        throw fail(k, "a URL such as postgresql://host:5432/dbname");
      }
      if (uri.getUserInfo() != null) {
        // the login is read from database.user and the password keys, and a URL's would be silently passed over
        throw fail(k, "a URL without a login, such as postgresql://host:5432/dbname: give the login as database.user and its"
            + " password as database.password or database.password-file");
      }
      return uri;
    }

    /** scheme://host[:port], no path, query or trailing slash; http only for a loopback host. */
    String publicUrl() {
      String s = str(ConfigKey.HTTP_PUBLIC_URL);
      if (s.isEmpty()) {
        return s;
      }
      URI u = httpUrl(ConfigKey.HTTP_PUBLIC_URL, s);
      if (u.getRawPath() != null && !u.getRawPath().isEmpty() || u.getRawQuery() != null || u.getRawFragment() != null) {
        throw fail(ConfigKey.HTTP_PUBLIC_URL, "an origin without a path, such as https://tidemark.example.com (http.path is added to it)");
      }
      return s;
    }

    /** An https URL, or http to a loopback host (a local test issuer); never with user info. */
    URI httpUrl(ConfigKey k, String s) {
      URI u;
      try {
        u = URI.create(s);
      } catch (IllegalArgumentException e) {
        throw fail(k, "an https URL");
      }
      boolean https = "https".equals(u.getScheme());
      boolean localHttp = "http".equals(u.getScheme()) && isLoopback(u.getHost());
      if (!(https || localHttp) || u.getHost() == null || u.getRawUserInfo() != null) {
        throw fail(k, "an https URL (http only to a loopback host)");
      }
      return u;
    }

    OAuthConfig oauth(String publicUrl) {
      String issuer = str(ConfigKey.AUTH_OAUTH_ISSUER);
      OAuthConfig oauth = new OAuthConfig(issuer, str(ConfigKey.AUTH_OAUTH_JWKS_URL), str(ConfigKey.AUTH_OAUTH_AUDIENCE),
          str(ConfigKey.AUTH_OAUTH_ROLE_CLAIM), list(ConfigKey.AUTH_OAUTH_ROLES), nonNegativeLong(ConfigKey.AUTH_OAUTH_LEEWAY_SECONDS),
          positiveLong(ConfigKey.AUTH_OAUTH_JWKS_REFRESH_SECONDS), positiveLong(ConfigKey.AUTH_OAUTH_JWKS_MAX_AGE_SECONDS));
      if (!oauth.enabled()) {
        for (ConfigKey k : List.of(ConfigKey.AUTH_OAUTH_JWKS_URL, ConfigKey.AUTH_OAUTH_AUDIENCE, ConfigKey.AUTH_OAUTH_ROLES)) {
          if (!str(k).isEmpty()) {
            throw contradiction(k, ConfigKey.AUTH_OAUTH_ISSUER, "is only read when " + ConfigKey.AUTH_OAUTH_ISSUER.key() + " is set");
          }
        }
        return oauth;
      }
      httpUrl(ConfigKey.AUTH_OAUTH_ISSUER, issuer);
      if (!oauth.jwksUrl().isEmpty()) {
        httpUrl(ConfigKey.AUTH_OAUTH_JWKS_URL, oauth.jwksUrl());
      }
      if (publicUrl.isEmpty()) {
        throw fail(ConfigKey.HTTP_PUBLIC_URL, "set when " + ConfigKey.AUTH_OAUTH_ISSUER.key()
            + " is: it is the resource clients ask the issuer for, such as https://tidemark.example.com");
      }
      if (oauth.roles().isEmpty()) {
        throw fail(ConfigKey.AUTH_OAUTH_ROLES, "set when " + ConfigKey.AUTH_OAUTH_ISSUER.key()
            + " is: the PostgreSQL roles an access token may name, such as tidemark_reader,tidemark_writer");
      }
      if (oauth.roleClaim().isEmpty()) {
        throw fail(ConfigKey.AUTH_OAUTH_ROLE_CLAIM, "the name of a claim, such as pg_role");
      }
      return oauth;
    }

    /** role:tool|tool,role:* as a map of role to its tools; "*" stands for every tool. */
    /** database.table-approvers: table:person|person pairs; a person's name may hold a colon (oauth:sub), a table's may not. */
    Map<String, List<String>> tableApprovers() {
      Map<String, List<String>> out = new java.util.LinkedHashMap<>();
      for (String pair : list(ConfigKey.DATABASE_TABLE_APPROVERS)) {
        int colon = pair.indexOf(':');
        List<String> people = colon <= 0 ? List.of() : Arrays.stream(pair.substring(colon + 1).split("\\|")).map(String::trim)
            .filter(x -> !x.isEmpty()).toList();
        if (colon <= 0 || people.isEmpty() || out.containsKey(pair.substring(0, colon).trim())) {
          throw fail(ConfigKey.DATABASE_TABLE_APPROVERS, "comma-separated table:person|person pairs, each table once"
              + " (such as public.salary:oauth:alice|ops-admin)");
        }
        out.put(pair.substring(0, colon).trim(), people);
      }
      return out;
    }

    /** Connections of Tidemark's login an approval holds at once (command-service's Proposals.CONNECTIONS). */
    static final int CONSOLE_CONNECTIONS = 2;

    /** console.*: the path must stay clear of the MCP endpoint's, and an OAuth issuer needs the console's client id. */
    ConsoleConfig console(boolean authEnabled, OAuthConfig oauth, List<DatabaseConfig> databases) {
      boolean enabled = bool(ConfigKey.CONSOLE_ENABLED);
      String path = path(ConfigKey.CONSOLE_PATH);
      String mcp = path(ConfigKey.HTTP_PATH);
      if (path.equals("/") || path.equals(mcp) || path.startsWith(mcp + "/") || mcp.startsWith(path + "/")) {
        throw fail(ConfigKey.CONSOLE_PATH, "a path of its own, apart from " + ConfigKey.HTTP_PATH.key() + " (" + mcp + "), such as /console");
      }
      String clientId = str(ConfigKey.CONSOLE_OAUTH_CLIENT_ID);
      if (enabled && !authEnabled) {
        throw new IllegalArgumentException("config key " + ConfigKey.CONSOLE_ENABLED.key() + " needs " + ConfigKey.AUTH_ENABLED.key()
            + " true: people sign in to the console with a token or the OAuth issuer");
      }
      if (enabled && oauth.enabled() && clientId.isEmpty()) {
        throw new IllegalArgumentException("config key " + ConfigKey.CONSOLE_OAUTH_CLIENT_ID.key() + " (" + ConfigKey.CONSOLE_OAUTH_CLIENT_ID.envName()
            + ") must name the console's client at " + oauth.issuer() + ": with auth.oauth.issuer, people sign in to the console there");
      }
      for (DatabaseConfig db : databases) {
        if (enabled && db.poolSize() < CONSOLE_CONNECTIONS) {
          throw new IllegalArgumentException("config key " + ConfigKey.DATABASE_POOL_SIZE.key() + " of database " + db.name() + " is "
              + db.poolSize() + ", and " + ConfigKey.CONSOLE_ENABLED.key() + " needs at least " + CONSOLE_CONNECTIONS
              + ": an approval in the console holds two connections of Tidemark's login at once");
        }
      }
      return new ConsoleConfig(enabled, path, list(ConfigKey.CONSOLE_ADMINISTRATORS), positiveLong(ConfigKey.CONSOLE_SESSION_SECONDS), clientId);
    }

    Map<String, List<String>> roleTools() {
      Map<String, List<String>> out = new java.util.TreeMap<>();
      for (String pair : list(ConfigKey.AUTH_ROLE_TOOLS)) {
        int colon = pair.indexOf(':');
        String role = colon <= 0 ? "" : pair.substring(0, colon).trim();
        if (role.isEmpty() || out.containsKey(role)) {
          throw fail(ConfigKey.AUTH_ROLE_TOOLS, "role:tool|tool pairs, each role once, separated by commas, such as "
              + "tidemark_reader:status|query,tidemark_writer:*");
        }
        List<String> tools = Arrays.stream(pair.substring(colon + 1).split("\\|")).map(String::trim).filter(t -> !t.isEmpty()).toList();
        out.put(role, tools);
      }
      return out;
    }

    /** database.caller-passwords, then the files of database.caller-password-dir over them. */
    Map<String, String> callerPasswords() {
      Map<String, String> out = new java.util.TreeMap<>();
      for (String pair : list(ConfigKey.DATABASE_CALLER_PASSWORDS)) {
        int colon = pair.indexOf(':');
        if (colon <= 0) {
          throw fail(ConfigKey.DATABASE_CALLER_PASSWORDS, "role:password pairs separated by commas, such as tidemark_reader:s3cret");
        }
        out.put(pair.substring(0, colon).trim(), pair.substring(colon + 1));
      }
      String dir = str(ConfigKey.DATABASE_CALLER_PASSWORD_DIR);
      if (!dir.isEmpty()) {
        java.nio.file.Path folder = java.nio.file.Path.of(dir);
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(folder)) {
          for (java.nio.file.Path f : files.sorted().toList()) {
            String role = f.getFileName().toString();
            // a mounted Secret also holds ..data and other dot entries: they name no role
            if (role.startsWith(".") || !java.nio.file.Files.isRegularFile(f)) {
              continue;
            }
            out.put(role, java.nio.file.Files.readString(f, java.nio.charset.StandardCharsets.UTF_8).strip());
          }
        } catch (java.io.IOException e) {
          throw fail(ConfigKey.DATABASE_CALLER_PASSWORD_DIR, "a readable folder (" + e.getMessage() + ")");
        }
      }
      return out;
    }

    String sslMode() {
      String mode = str(ConfigKey.DATABASE_SSL_MODE);
      if (!DatabaseConfig.SSL_MODES.contains(mode)) {
        throw fail(ConfigKey.DATABASE_SSL_MODE, "one of " + String.join(", ", DatabaseConfig.SSL_MODES));
      }
      if (!str(ConfigKey.DATABASE_SSL_ROOT_CERT).isEmpty() && !mode.startsWith("verify-")) {
        throw contradiction(ConfigKey.DATABASE_SSL_ROOT_CERT, ConfigKey.DATABASE_SSL_MODE,
            "is only read when " + ConfigKey.DATABASE_SSL_MODE.key() + " is verify-ca or verify-full, not " + mode);
      }
      return mode;
    }

    String readableFileOrEmpty(ConfigKey k) {
      String file = str(k);
      if (!file.isEmpty() && !java.nio.file.Files.isReadable(java.nio.file.Path.of(file))) {
        throw fail(k, "a readable file; " + file + " is not");
      }
      return file;
    }

    /** kafka.security-protocol and what it needs, as Kafka client properties. */
    Map<String, String> kafkaSecurity() {
      String protocol = str(ConfigKey.KAFKA_SECURITY_PROTOCOL);
      List<String> protocols = List.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
      if (!protocols.contains(protocol)) {
        throw fail(ConfigKey.KAFKA_SECURITY_PROTOCOL, "one of " + String.join(", ", protocols));
      }
      boolean tls = protocol.endsWith("SSL");
      boolean sasl = protocol.startsWith("SASL_");
      Map<String, String> out = new java.util.TreeMap<>();
      out.put("security.protocol", protocol);
      String ca = readableFileOrEmpty(ConfigKey.KAFKA_SSL_CA_FILE);
      if (!ca.isEmpty()) {
        if (!tls) {
          throw contradiction(ConfigKey.KAFKA_SSL_CA_FILE, ConfigKey.KAFKA_SECURITY_PROTOCOL, "is only read with SSL or SASL_SSL, not " + protocol);
        }
        out.put("ssl.truststore.type", "PEM");
        out.put("ssl.truststore.location", ca);
      }
      String user = str(ConfigKey.KAFKA_SASL_USERNAME);
      String password = str(ConfigKey.KAFKA_SASL_PASSWORD);
      if (!sasl) {
        if (!user.isEmpty() || !password.isEmpty()) {
          throw contradiction(user.isEmpty() ? ConfigKey.KAFKA_SASL_PASSWORD : ConfigKey.KAFKA_SASL_USERNAME,
              ConfigKey.KAFKA_SECURITY_PROTOCOL, "is only read with SASL_PLAINTEXT or SASL_SSL, not " + protocol);
        }
        return out;
      }
      String mechanism = str(ConfigKey.KAFKA_SASL_MECHANISM);
      String module = switch (mechanism) {
        case "PLAIN" -> "org.apache.kafka.common.security.plain.PlainLoginModule";
        case "SCRAM-SHA-256", "SCRAM-SHA-512" -> "org.apache.kafka.common.security.scram.ScramLoginModule";
        default -> throw fail(ConfigKey.KAFKA_SASL_MECHANISM, "one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512");
      };
      if (user.isEmpty()) {
        throw fail(ConfigKey.KAFKA_SASL_USERNAME, "set when " + ConfigKey.KAFKA_SECURITY_PROTOCOL.key() + " is " + protocol);
      }
      if (password.isEmpty()) {
        throw fail(ConfigKey.KAFKA_SASL_PASSWORD, "set (or " + ConfigKey.KAFKA_SASL_PASSWORD_FILE.key() + ") when "
            + ConfigKey.KAFKA_SECURITY_PROTOCOL.key() + " is " + protocol);
      }
      out.put("sasl.mechanism", mechanism);
      out.put("sasl.jaas.config", module + " required username=\"" + jaasQuoted(user) + "\" password=\"" + jaasQuoted(password) + "\";");
      return out;
    }

    /** A value inside a JAAS option's double quotes: a quote or a backslash would end or escape it. */
    private static String jaasQuoted(String value) {
      return value.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    private IllegalArgumentException contradiction(ConfigKey k, ConfigKey other, String why) {
      return new IllegalArgumentException(where(k) + " " + why + "; set " + other.key() + " accordingly or leave " + k.key() + " empty");
    }

    Set<Role> roles() {
      List<String> names = list(ConfigKey.ROLES);
      if (names.isEmpty()) {
        throw fail(ConfigKey.ROLES, "at least one of gateway, query, command, changelog");
      }
      EnumSet<Role> roles = EnumSet.noneOf(Role.class);
      for (String name : names) {
        roles.add(Role.fromWire(name));
      }
      return roles;
    }

    private IllegalArgumentException fail(ConfigKey k, String expected) {
      return new IllegalArgumentException(where(k) + " must be " + expected);
    }

    /** How an error names the key: in an entry of databases, by the entry and the key's last part. */
    private String where(ConfigKey k) {
      return entry != null && k.key().startsWith(DATABASE_PREFIX)
          ? "config key " + entry + " " + k.key().substring(DATABASE_PREFIX.length())
          : "config key " + k.key() + " (" + k.envName() + ")";
    }
  }
}
