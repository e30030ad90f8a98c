package dev.tidemark.contract.config;

import dev.tidemark.contract.Role;
import java.net.URI;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
    String anonymousRole) {

  @Override
  public String toString() {
    return "TidemarkConfig[nodeId=" + nodeId + ", roles=" + roles + ", http=" + http + ", ops=" + ops + ", database=" + database
        + ", kafka=" + kafka + ", cluster=" + cluster + ", busSendTimeoutMs=" + busSendTimeoutMs + ", authEnabled=" + authEnabled + ", callLimits=" + callLimits + "]";
  }

  public record HttpConfig(String host, int port, String path, long maxBodyBytes, long bodyTimeoutMs, int idleTimeoutSeconds,
      int maxConnections, int maxUnauthenticatedConnections, List<String> allowedOrigins) {}

  /** How many tool calls one caller may run at once on a gateway, and how many may wait, for how long. */
  public record CallLimits(int maxConcurrent, int maxQueued, long queueTimeoutMs) {}

  public record OpsConfig(String host, int port) {}

  public record DatabaseConfig(
      String name,
      String host,
      int port,
      String dbname,
      String user,
      String password,
      int poolSize,
      List<String> schemas,
      long statementTimeoutMs,
      long catalogCacheMs,
      Map<String, String> callerPasswords) {

    public DatabaseConfig {
      callerPasswords = Map.copyOf(callerPasswords);
    }

    /** The login password of caller role {@code role}, or null when none is configured. */
    public String callerPassword(String role) {
      return callerPasswords.get(role);
    }

    @Override
    public String toString() {
      // never print the password
      return "DatabaseConfig[name=" + name + ", host=" + host + ", port=" + port + ", dbname=" + dbname
          + ", user=" + user + ", poolSize=" + poolSize + ", schemas=" + schemas + ", callerRoles=" + callerPasswords.keySet() + "]";
    }
  }

  public record KafkaConfig(
      String bootstrapServers, String topicPrefix, int topicPartitions, short topicReplicationFactor, long requestTimeoutMs) {

    public String topicFor(String database) {
      return topicPrefix + database;
    }
  }

  /** The changelog role's capture, relay and retention settings. */
  /** The command role: plan ids, idempotency keys and who may commit without a plan. */
  public record CommandConfig(long planTtlSeconds, long idempotencyRetentionHours, List<String> directCommitRoles) {
  }

  public record ChangelogConfig(
      long retentionSeconds, long pruneIntervalSeconds, int relayBatchSize, long relayPollMs, long reconcileSeconds,
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
      int eventLoops) {}

  /** Builds the config from a value for every key; a missing key takes its default. */
  public static TidemarkConfig from(Map<ConfigKey, String> given) {
    Values v = new Values(given);
    URI url = v.uri(ConfigKey.DATABASE_URL);
    boolean authEnabled = v.bool(ConfigKey.AUTH_ENABLED);
    String httpHost = v.str(ConfigKey.HTTP_HOST);
    if (!authEnabled && !isLoopback(httpHost)) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ENABLED.key() + " may only be false when "
          + ConfigKey.HTTP_HOST.key() + " is a loopback address such as 127.0.0.1");
    }
    String dbname = url.getPath() == null || url.getPath().length() <= 1 ? "postgres" : url.getPath().substring(1);
    return new TidemarkConfig(
        v.str(ConfigKey.NODE_ID),
        v.roles(),
        new HttpConfig(
            httpHost,
            v.port(ConfigKey.HTTP_PORT),
            v.path(ConfigKey.HTTP_PATH),
            v.positiveLong(ConfigKey.HTTP_MAX_BODY_BYTES),
            v.positiveLong(ConfigKey.HTTP_BODY_TIMEOUT_MS),
            (int) v.positiveLong(ConfigKey.HTTP_IDLE_TIMEOUT_SECONDS),
            (int) v.positiveLong(ConfigKey.HTTP_MAX_CONNECTIONS),
            (int) v.positiveLong(ConfigKey.HTTP_MAX_UNAUTHENTICATED_CONNECTIONS),
            v.list(ConfigKey.HTTP_ALLOWED_ORIGINS)),
        new OpsConfig(v.str(ConfigKey.OPS_HOST), v.port(ConfigKey.OPS_PORT)),
        new DatabaseConfig(
            v.name(ConfigKey.DATABASE_NAME),
            url.getHost(),
            url.getPort() < 0 ? 5432 : url.getPort(),
            dbname,
            v.str(ConfigKey.DATABASE_USER),
            v.str(ConfigKey.DATABASE_PASSWORD),
            (int) v.positiveLong(ConfigKey.DATABASE_POOL_SIZE),
            v.list(ConfigKey.DATABASE_SCHEMAS),
            v.positiveLong(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS),
            v.nonNegativeLong(ConfigKey.DATABASE_CATALOG_CACHE_MS),
            v.callerPasswords()),
        new KafkaConfig(
            v.str(ConfigKey.KAFKA_BOOTSTRAP_SERVERS),
            v.str(ConfigKey.KAFKA_TOPIC_PREFIX),
            (int) v.positiveLong(ConfigKey.KAFKA_TOPIC_PARTITIONS),
            (short) v.positiveLong(ConfigKey.KAFKA_TOPIC_REPLICATION_FACTOR),
            v.positiveLong(ConfigKey.KAFKA_REQUEST_TIMEOUT_MS)),
        new ClusterConfig(
            v.str(ConfigKey.CLUSTER_NAME),
            v.str(ConfigKey.CLUSTER_HOST),
            v.port(ConfigKey.CLUSTER_PORT),
            v.list(ConfigKey.CLUSTER_MEMBERS),
            v.str(ConfigKey.CLUSTER_KUBERNETES_SERVICE_DNS),
            (int) v.nonNegativeLong(ConfigKey.CLUSTER_JOIN_WAIT_SECONDS),
            v.str(ConfigKey.CLUSTER_EVENT_BUS_HOST),
            v.port(ConfigKey.CLUSTER_EVENT_BUS_PORT),
            (int) v.nonNegativeLong(ConfigKey.NODE_EVENT_LOOPS)),
        v.positiveLong(ConfigKey.BUS_SEND_TIMEOUT_MS),
        authEnabled,
        new CallLimits(
            (int) v.positiveLong(ConfigKey.AUTH_MAX_CONCURRENT_CALLS),
            (int) v.nonNegativeLong(ConfigKey.AUTH_MAX_QUEUED_CALLS),
            v.positiveLong(ConfigKey.AUTH_QUEUE_TIMEOUT_MS)),
        new ChangelogConfig(
            v.positiveLong(ConfigKey.CHANGELOG_RETENTION_SECONDS),
            v.positiveLong(ConfigKey.CHANGELOG_PRUNE_INTERVAL_SECONDS),
            (int) Math.min(v.positiveLong(ConfigKey.CHANGELOG_RELAY_BATCH_SIZE), 100_000),
            v.positiveLong(ConfigKey.CHANGELOG_RELAY_POLL_MS),
            v.positiveLong(ConfigKey.CHANGELOG_RECONCILE_SECONDS),
            v.positiveLong(ConfigKey.CHANGELOG_MAX_SLOT_LAG_BYTES)),
        new CommandConfig(
            v.positiveLong(ConfigKey.PLAN_TTL_SECONDS),
            v.positiveLong(ConfigKey.IDEMPOTENCY_RETENTION_HOURS),
            v.list(ConfigKey.COMMAND_DIRECT_COMMIT_ROLES)),
        v.positiveLong(ConfigKey.KEYS_REFRESH_SECONDS),
        v.str(ConfigKey.AUTH_ANONYMOUS_ROLE));
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
  private record Values(Map<ConfigKey, String> given) {

    Values {
      given = given.isEmpty() ? new EnumMap<>(ConfigKey.class) : new EnumMap<>(given);
    }

    String str(ConfigKey k) {
      String value = given.get(k);
      return (value == null ? k.defaultValue() : value).trim();
    }

    List<String> list(ConfigKey k) {
      String s = str(k);
      return s.isEmpty() ? List.of() : Arrays.stream(s.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList();
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
      try {
        URI uri = URI.create(str(k));
        if (!"postgresql".equals(uri.getScheme()) && !"postgres".equals(uri.getScheme()) || uri.getHost() == null) {
          throw fail(k, "a URL such as postgresql://host:5432/dbname");
        }
        return uri;
      } catch (IllegalArgumentException e) {
        throw fail(k, "a URL such as postgresql://host:5432/dbname");
      }
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

    private static IllegalArgumentException fail(ConfigKey k, String expected) {
      return new IllegalArgumentException("config key " + k.key() + " (" + k.envName() + ") must be " + expected);
    }
  }
}
