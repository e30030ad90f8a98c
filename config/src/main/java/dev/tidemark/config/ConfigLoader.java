package dev.tidemark.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.tidemark.config.TidemarkConfig.CallLimits;
import dev.tidemark.config.TidemarkConfig.ChangelogConfig;
import dev.tidemark.config.TidemarkConfig.ClusterConfig;
import dev.tidemark.config.TidemarkConfig.CommandConfig;
import dev.tidemark.config.TidemarkConfig.ConsoleConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.config.TidemarkConfig.EventsConfig;
import dev.tidemark.config.TidemarkConfig.HttpConfig;
import dev.tidemark.config.TidemarkConfig.KafkaConfig;
import dev.tidemark.config.TidemarkConfig.LogConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.config.TidemarkConfig.OpsConfig;
import dev.tidemark.config.TidemarkConfig.SubscriptionLimits;
import dev.tidemark.config.TidemarkConfig.TasksConfig;
import dev.tidemark.config.TidemarkConfig.TracingConfig;
import dev.tidemark.config.TidemarkConfig.WatchConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Resolves every key from the config file, then the environment, then flags (the last one found
 * wins), and builds the typed config's records once, from values {@link ConfigValidator} read and
 * checked. An unknown key in the file is an error, so that a
 * misspelt setting is never silently ignored.
 */
public final class ConfigLoader {

  private ConfigLoader() {}

  public static TidemarkConfig load(Path file, Map<String, String> env, Map<ConfigKey, String> flags) {
    Map<ConfigKey, String> values = fromFileAndEnvironment(file, env);
    values.putAll(flags);
    return resolve(values);
  }

  /** The keys the file sets, then those the environment sets over them; unknown names are refused. */
  public static Map<ConfigKey, String> fromFileAndEnvironment(Path file, Map<String, String> env) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    if (file != null) {
      values.putAll(readFile(file));
    }
    for (ConfigKey key : ConfigKey.values()) {
      String fromEnv = env.get(key.envName());
      if (fromEnv != null) {
        values.put(key, fromEnv);
      }
    }
    refuseUnknownEnvironment(env);
    return values;
  }

  /** The typed config of fully layered values, with secrets given as files read in. */
  public static TidemarkConfig resolve(Map<ConfigKey, String> layered) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    values.putAll(layered);
    readSecretFile(values, ConfigKey.DATABASE_PASSWORD_FILE, ConfigKey.DATABASE_PASSWORD);
    readSecretFile(values, ConfigKey.KAFKA_SASL_PASSWORD_FILE, ConfigKey.KAFKA_SASL_PASSWORD);
    return build(values);
  }

  /** Builds the config from a value for every key; a missing key takes its default. */
  static TidemarkConfig build(Map<ConfigKey, String> given) {
    ConfigValidator v = new ConfigValidator(given);
    boolean authEnabled = v.bool(ConfigKey.AUTH_ENABLED);
    String httpHost = v.str(ConfigKey.HTTP_HOST);
    v.checkNode(authEnabled, httpHost);
    String publicUrl = v.publicUrl();
    OAuthConfig oauth = oauth(v, publicUrl);
    v.checkOAuthNeedsAuth(oauth, authEnabled);
    DatabaseConfig main = database(v);
    List<DatabaseConfig> databases = databases(v, main);
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
        tasks(v),
        databases,
        console(v, authEnabled, oauth, databases));
  }

  private static OAuthConfig oauth(ConfigValidator v, String publicUrl) {
    OAuthConfig oauth = new OAuthConfig(v.str(ConfigKey.AUTH_OAUTH_ISSUER), v.str(ConfigKey.AUTH_OAUTH_JWKS_URL),
        v.str(ConfigKey.AUTH_OAUTH_AUDIENCE), v.str(ConfigKey.AUTH_OAUTH_ROLE_CLAIM), v.list(ConfigKey.AUTH_OAUTH_ROLES),
        v.nonNegativeLong(ConfigKey.AUTH_OAUTH_LEEWAY_SECONDS), v.positiveLong(ConfigKey.AUTH_OAUTH_JWKS_REFRESH_SECONDS),
        v.positiveLong(ConfigKey.AUTH_OAUTH_JWKS_MAX_AGE_SECONDS));
    v.checkOAuth(oauth, publicUrl);
    return oauth;
  }

  private static TasksConfig tasks(ConfigValidator v) {
    long ttl = v.positiveLong(ConfigKey.TASKS_TTL_MS);
    long max = v.positiveLong(ConfigKey.TASKS_MAX_TTL_MS);
    v.checkTaskTtl(ttl, max);
    return new TasksConfig(ttl, max, v.nonNegativeLong(ConfigKey.TASKS_PROMOTE_AFTER_MS), v.positiveLong(ConfigKey.TASKS_POLL_INTERVAL_MS));
  }

  private static ConsoleConfig console(ConfigValidator v, boolean authEnabled, OAuthConfig oauth, List<DatabaseConfig> databases) {
    boolean enabled = v.bool(ConfigKey.CONSOLE_ENABLED);
    String path = v.path(ConfigKey.CONSOLE_PATH);
    String clientId = v.str(ConfigKey.CONSOLE_OAUTH_CLIENT_ID);
    v.checkConsole(enabled, path, clientId, authEnabled, oauth, databases);
    return new ConsoleConfig(enabled, path, v.list(ConfigKey.CONSOLE_ADMINISTRATORS), v.positiveLong(ConfigKey.CONSOLE_SESSION_SECONDS),
        clientId);
  }

  /** The database.* keys as one served database. */
  private static DatabaseConfig database(ConfigValidator v) {
    URI url = v.uri(ConfigKey.DATABASE_URL);
    String dbname = url.getPath() == null || url.getPath().length() <= 1 ? "postgres" : url.getPath().substring(1);
    return new DatabaseConfig(
        v.name(ConfigKey.DATABASE_NAME),
        url.getHost(),
        url.getPort() < 0 ? 5432 : url.getPort(),
        dbname,
        v.str(ConfigKey.DATABASE_USER),
        v.str(ConfigKey.DATABASE_PASSWORD),
        v.positiveInt(ConfigKey.DATABASE_POOL_SIZE),
        v.positiveLong(ConfigKey.DATABASE_POOL_WAIT_MS),
        v.list(ConfigKey.DATABASE_SCHEMAS),
        v.positiveLong(ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS),
        v.nonNegativeLong(ConfigKey.DATABASE_CATALOG_CACHE_MS),
        callerPasswords(v),
        v.sslMode(),
        v.readableFileOrEmpty(ConfigKey.DATABASE_SSL_ROOT_CERT),
        v.list(ConfigKey.DATABASE_APPROVAL_TABLES),
        v.functions(ConfigKey.DATABASE_REVIEWED_FUNCTIONS),
        v.positiveInt(ConfigKey.DATABASE_CALLER_SHARE_PERCENT, 100),
        v.list(ConfigKey.DATABASE_APPROVERS),
        v.tableApprovers(),
        v.namedTools(),
        v.toolsFile(),
        v.keyOnlyTables(),
        v.unplannedTables(),
        changelogStore(v, url.getHost(), url.getPort() < 0 ? 5432 : url.getPort(), dbname));
  }

  /** database.changelog-url, or null when the changelog stays in the served database. */
  private static DatabaseConfig.Store changelogStore(ConfigValidator v, String servedHost, int servedPort, String servedDbname) {
    if (v.str(ConfigKey.DATABASE_CHANGELOG_URL).isEmpty()) {
      return null;
    }
    URI url = v.uri(ConfigKey.DATABASE_CHANGELOG_URL);
    String dbname = url.getPath() == null || url.getPath().length() <= 1 ? "postgres" : url.getPath().substring(1);
    DatabaseConfig.Store store = new DatabaseConfig.Store(url.getHost(), url.getPort() < 0 ? 5432 : url.getPort(), dbname);
    if (store.equals(new DatabaseConfig.Store(servedHost, servedPort, servedDbname))) {
      // one database under two names would run both stores' schemas side by side in it
      throw v.fail(ConfigKey.DATABASE_CHANGELOG_URL, "a database other than database.url's; leave it empty to store the changelog"
          + " in the served database");
    }
    return store;
  }

  /** database.caller-passwords, then the files of database.caller-password-dir over them. */
  private static Map<String, String> callerPasswords(ConfigValidator v) {
    Map<String, String> out = new TreeMap<>();
    for (String pair : v.list(ConfigKey.DATABASE_CALLER_PASSWORDS)) {
      int colon = pair.indexOf(':');
      if (colon <= 0) {
        throw v.fail(ConfigKey.DATABASE_CALLER_PASSWORDS, "role:password pairs separated by commas, such as tidemark_reader:s3cret");
      }
      out.put(pair.substring(0, colon).trim(), pair.substring(colon + 1));
    }
    String dir = v.str(ConfigKey.DATABASE_CALLER_PASSWORD_DIR);
    if (!dir.isEmpty()) {
      try (Stream<Path> files = Files.list(Path.of(dir))) {
        for (Path f : files.sorted().toList()) {
          String role = f.getFileName().toString();
          // a mounted Secret also holds ..data and other dot entries: they name no role
          if (role.startsWith(".") || !Files.isRegularFile(f)) {
            continue;
          }
          out.put(role, Files.readString(f, StandardCharsets.UTF_8).strip());
        }
      } catch (IOException e) {
        throw v.fail(ConfigKey.DATABASE_CALLER_PASSWORD_DIR, "a readable folder (" + e.getMessage() + ")");
      }
    }
    return out;
  }

  /**
   * {@code main} and then each entry of {@code databases}: an entry sets database.* keys by their
   * last part and takes every other one from database.*.
   */
  private static List<DatabaseConfig> databases(ConfigValidator v, DatabaseConfig main) {
    List<DatabaseConfig> out = new ArrayList<>(List.of(main));
    String text = v.str(ConfigKey.DATABASES);
    if (text.isEmpty()) {
      return out;
    }
    JsonNode entries;
    try {
      entries = new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).readTree(text);
    } catch (IOException e) {
      throw v.fail(ConfigKey.DATABASES, "a list of entries (a JSON array of objects in " + ConfigKey.DATABASES.envName() + ")");
    }
    if (entries == null || !entries.isArray()) {
      throw v.fail(ConfigKey.DATABASES, "a list of entries (a JSON array of objects in " + ConfigKey.DATABASES.envName() + ")");
    }
    for (int i = 0; i < entries.size(); i++) {
      DatabaseConfig db = database(entry(v, i, entries.get(i)));
      v.checkDistinct(db, out);
      out.add(db);
    }
    return out;
  }

  /** The keys of entry {@code i}: database.* with the entry's own values over them. */
  private static ConfigValidator entry(ConfigValidator v, int i, JsonNode node) {
    String label = ConfigKey.DATABASES.key() + "[" + i + "]";
    if (!node.isObject()) {
      throw new IllegalArgumentException("config key " + label + " must be a mapping of database keys, such as {name: sales, url: ...}");
    }
    Map<ConfigKey, String> values = v.given();
    // a database's tools are its own: their statements name its tables, so no entry inherits the default database's
    List.of(ConfigKey.DATABASE_TOOLS, ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS, ConfigKey.DATABASE_TOOLS_FILE)
        .forEach(values::remove);
    Iterator<String> names = node.fieldNames();
    while (names.hasNext()) {
      String sub = names.next();
      ConfigKey k = ConfigKey.byKey(ConfigValidator.DATABASE_PREFIX + sub);
      JsonNode value = node.get(sub);
      if (k == null) {
        throw new IllegalArgumentException("config key " + label + " has an unknown key '" + sub + "'; an entry may set "
            + String.join(", ", entryKeys()));
      }
      values.put(k, SECTIONS.contains(k) && value.isContainerNode() ? value.toString() : plain(value, "config key " + label + "." + sub));
    }
    if (!node.has("name") || !node.has("url")) {
      throw new IllegalArgumentException("config key " + label + " must set name and url; the rest is taken from database.*");
    }
    if (node.has("password-file")) {
      String file = values.get(ConfigKey.DATABASE_PASSWORD_FILE).trim();
      try {
        values.put(ConfigKey.DATABASE_PASSWORD, Files.readString(Path.of(file), StandardCharsets.UTF_8).strip());
      } catch (IOException e) {
        throw new IllegalArgumentException("config key " + label + ".password-file: cannot read " + file + " (" + e.getMessage() + ")");
      }
    }
    return new ConfigValidator(values, label + " (" + node.get("name").asText() + ")");
  }

  /** What an entry of databases may set: every database.* key by its last part. */
  static List<String> entryKeys() {
    return Arrays.stream(ConfigKey.values()).map(ConfigKey::key).filter(key -> key.startsWith(ConfigValidator.DATABASE_PREFIX))
        .map(key -> key.substring(ConfigValidator.DATABASE_PREFIX.length())).toList();
  }

  /** A secret given as a file (a mounted Secret) takes the place of the key that holds it inline. */
  private static void readSecretFile(Map<ConfigKey, String> values, ConfigKey fileKey, ConfigKey valueKey) {
    String file = values.getOrDefault(fileKey, "").trim();
    if (file.isEmpty()) {
      return;
    }
    try {
      values.put(valueKey, Files.readString(Path.of(file), StandardCharsets.UTF_8).strip());
    } catch (IOException e) {
      throw new IllegalArgumentException("config key " + fileKey.key() + ": cannot read " + file + " (" + e.getMessage() + ")");
    }
  }

  /**
   * What Kubernetes sets for every Service whose name starts with {@code tidemark-} (service links:
   * {@code TIDEMARK_GATEWAY_SERVICE_HOST}, {@code TIDEMARK_GATEWAY_PORT_80_TCP_ADDR}, ...): not settings.
   */
  private static final Pattern SERVICE_LINK = Pattern.compile(
      "TIDEMARK_([A-Z0-9_]+_)?(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\\d+_(TCP|UDP|SCTP)(_PROTO|_PORT|_ADDR)?)?)");

  /** A misspelt variable would otherwise be ignored as silently as a misspelt key in the file. */
  static void refuseUnknownEnvironment(Map<String, String> env) {
    for (String name : new java.util.TreeSet<>(env.keySet())) {
      if (name.startsWith("TIDEMARK_") && !SERVICE_LINK.matcher(name).matches()
          && java.util.Arrays.stream(ConfigKey.values()).noneMatch(k -> k.envName().equals(name))) {
        throw new IllegalArgumentException("environment variable " + name
            + " names no config key; docs/configuration.md lists every key and its variable");
      }
    }
  }

  /** The file is YAML (JSON is YAML too): either flat dotted keys or nested sections. */
  static Map<ConfigKey, String> readFile(Path file) {
    JsonNode root;
    try {
      // a key written twice in one mapping is refused, not resolved by whichever came last
      root = new ObjectMapper(new YAMLFactory()).enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .readTree(file.toFile());
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage());
    }
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    if (root == null || root.isMissingNode() || root.isNull()) {
      return values;
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException("config file " + file + " must hold a mapping of keys to values");
    }
    flatten("", root, values, file);
    return values;
  }

  private static void flatten(String prefix, JsonNode node, Map<ConfigKey, String> out, Path file) {
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> e = fields.next();
      String key = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
      JsonNode value = e.getValue();
      ConfigKey known = ConfigKey.byKey(key);
      if (known != null) {
        if (out.containsKey(known)) {
          throw new IllegalArgumentException("config file " + file + ": " + key
              + " is set twice (once flat, once in a section); keep one");
        }
        // keys whose value is a list or mapping of sections: kept as JSON, checked entry by entry when the config is built
        out.put(known, SECTIONS.contains(known) && value.isContainerNode() ? value.toString() : scalar(value, key, file));
      } else if (value.isObject()) {
        flatten(key, value, out, file);
      } else {
        throw new IllegalArgumentException("config file " + file + ": unknown key '" + key
            + "'; docs/configuration.md lists every key");
      }
    }
  }

  /** Keys whose value in the file is a YAML list or mapping, and in the environment its JSON. */
  static final java.util.Set<ConfigKey> SECTIONS = java.util.EnumSet.of(ConfigKey.DATABASES, ConfigKey.DATABASE_TOOLS,
      ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS);

  private static String scalar(JsonNode value, String key, Path file) {
    return plain(value, "config file " + file + ": " + key);
  }

  /** A plain value, or a list of plain values joined by commas; {@code where} names it in the error. */
  static String plain(JsonNode value, String where) {
    if (value.isArray()) {
      StringBuilder sb = new StringBuilder();
      for (JsonNode item : value) {
        if (!item.isValueNode()) {
          throw new IllegalArgumentException(where + " must be a list of plain values");
        }
        sb.append(sb.length() == 0 ? "" : ",").append(item.asText());
      }
      return sb.toString();
    }
    if (!value.isValueNode()) {
      throw new IllegalArgumentException(where + " must be a plain value");
    }
    return value.isNull() ? "" : value.asText();
  }
}
