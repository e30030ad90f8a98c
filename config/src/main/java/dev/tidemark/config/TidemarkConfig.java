package dev.tidemark.config;

import dev.tidemark.contract.Role;
import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import io.vertx.sqlclient.PoolOptions;
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
    return withDatabase(db);
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
    return withDatabase(database.withPoolSize(Math.max(1, share)));
  }

  /** The same config with {@code db} as its {@link #database()}; {@link #databases()} stays as it is. */
  public TidemarkConfig withDatabase(DatabaseConfig db) {
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
      String toolsFile,
      List<String> keyOnlyTables,
      List<String> unplannedTables,
      Store changelogStore) {

    /** Where the changelog is stored when it is not the served database (database.changelog-url). */
    public record Store(String host, int port, String dbname) {}

    /** The values database.ssl-mode takes, in libpq's spelling. */
    public static final List<String> SSL_MODES = List.of("disable", "require", "verify-ca", "verify-full");

    public DatabaseConfig {
      callerPasswords = Map.copyOf(callerPasswords);
      approvalTables = List.copyOf(approvalTables);
      reviewedFunctions = List.copyOf(reviewedFunctions);
      approvers = List.copyOf(approvers);
      tableApprovers = Map.copyOf(tableApprovers);
      keyOnlyTables = List.copyOf(keyOnlyTables);
      unplannedTables = List.copyOf(unplannedTables);
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
          callerPasswords, sslMode, sslRootCert, approvalTables, reviewedFunctions, callerSharePercent, approvers, tableApprovers, namedTools, toolsFile,
          keyOnlyTables, unplannedTables, changelogStore);
    }

    /** Whether the changelog is stored in a database of its own (database.changelog-url) rather than the served one. */
    public boolean separateChangelog() {
      return changelogStore != null;
    }

    /**
     * The database the changelog is stored in, as a database of the same login, TLS and pool
     * settings: the served one itself when database.changelog-url is empty.
     */
    public DatabaseConfig changelogDatabase() {
      if (changelogStore == null) {
        return this;
      }
      return new DatabaseConfig(name, changelogStore.host(), changelogStore.port(), changelogStore.dbname(), user, password, poolSize,
          poolWaitMs, schemas, statementTimeoutMs, catalogCacheMs, callerPasswords, sslMode, sslRootCert, approvalTables,
          reviewedFunctions, callerSharePercent, approvers, tableApprovers, namedTools, toolsFile, keyOnlyTables,
          unplannedTables, null);
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

  /**
   * Builds the config from a value for every key; a missing key takes its default. {@link
   * ConfigLoader} reads the values from file, environment and flags.
   */
  public static TidemarkConfig from(Map<ConfigKey, String> given) {
    return ConfigLoader.build(given);
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
}
