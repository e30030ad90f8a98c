package dev.tidemark.config;

import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Role;
import java.net.URI;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads each key's value as its type and refuses what does not fit, alone or beside other keys,
 * naming the key in every error so that a bad setting is easy to find. {@link ConfigLoader} builds
 * the records from what it returns.
 */
final class ConfigValidator {

  static final String DATABASE_PREFIX = "database.";

  private final Map<ConfigKey, String> given;
  private final String entry;

  ConfigValidator(Map<ConfigKey, String> given) {
    this(given, null);
  }

  /** @param entry the entry of databases these values are of, or null for the top level */
  ConfigValidator(Map<ConfigKey, String> given, String entry) {
    this.given = given.isEmpty() ? new EnumMap<>(ConfigKey.class) : new EnumMap<>(given);
    this.entry = entry;
  }

  /** The values as given, a copy: an entry of databases starts from them. */
  Map<ConfigKey, String> given() {
    return new EnumMap<>(given);
  }

  /** auth.enabled false only on a loopback host, and keys that are each valid but cannot hold together. */
  void checkNode(boolean authEnabled, String httpHost) {
    if (!authEnabled && !TidemarkConfig.isLoopback(httpHost)) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ENABLED.key() + " may only be false when "
          + ConfigKey.HTTP_HOST.key() + " is a loopback address such as 127.0.0.1");
    }
    refuseContradictions(authEnabled);
  }

  /** Keys that are each valid but cannot hold together: the node would fail later, and less clearly. */
  private void refuseContradictions(boolean authEnabled) {
    Set<Role> roles = roles();
    Map<Integer, ConfigKey> ports = new java.util.HashMap<>();
    List<ConfigKey> bound = new java.util.ArrayList<>(List.of(ConfigKey.OPS_PORT, ConfigKey.CLUSTER_PORT, ConfigKey.CLUSTER_EVENT_BUS_PORT));
    if (roles.contains(Role.GATEWAY)) {
      bound.add(0, ConfigKey.HTTP_PORT);
    }
    for (ConfigKey k : bound) {
      int port = port(k);
      ConfigKey other = port == 0 ? null : ports.putIfAbsent(port, k);
      if (other != null) {
        throw new IllegalArgumentException("config keys " + other.key() + " and " + k.key() + " are both " + port
            + ": one node cannot listen twice on one port; give " + k.key() + " (" + k.envName() + ") another");
      }
    }
    if (!authEnabled && str(ConfigKey.AUTH_ANONYMOUS_ROLE).equals(str(ConfigKey.DATABASE_USER))) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_ANONYMOUS_ROLE.key() + " may not be "
          + ConfigKey.DATABASE_USER.key() + " (" + str(ConfigKey.DATABASE_USER) + "): callers never run as Tidemark's own login");
    }
  }

  /** Two databases may share neither a name nor a PostgreSQL database (they would share its slot and changelog). */
  void checkDistinct(DatabaseConfig db, List<DatabaseConfig> others) {
    for (DatabaseConfig other : others) {
      if (other.name().equals(db.name())) {
        throw fail(ConfigKey.DATABASES, "a list of databases with names of their own; " + db.name() + " is named twice");
      }
      if (other.host().equals(db.host()) && other.port() == db.port() && other.dbname().equals(db.dbname())) {
        throw fail(ConfigKey.DATABASES, "a list of databases of their own; " + db.name() + " and " + other.name()
            + " are both " + db.host() + ":" + db.port() + "/" + db.dbname());
      }
      DatabaseConfig store = db.changelogDatabase();
      DatabaseConfig otherStore = other.changelogDatabase();
      if ((db.separateChangelog() || other.separateChangelog()) && otherStore.host().equals(store.host())
          && otherStore.port() == store.port() && otherStore.dbname().equals(store.dbname())) {
        throw fail(ConfigKey.DATABASES, "a list of databases whose changelogs are stored apart; " + db.name() + " and " + other.name()
            + " both store theirs in " + store.host() + ":" + store.port() + "/" + store.dbname());
      }
    }
  }

  /** A ttl longer than the most a task may be kept would never be given. */
  void checkTaskTtl(long ttl, long max) {
    if (ttl > max) {
      throw fail(ConfigKey.TASKS_TTL_MS, "a number no larger than " + ConfigKey.TASKS_MAX_TTL_MS.key() + " (" + max + ")");
    }
  }

  /** The OAuth keys: each only with an issuer, and an issuer with what clients and tokens need. */
  void checkOAuth(OAuthConfig oauth, String publicUrl) {
    if (!oauth.enabled()) {
      for (ConfigKey k : List.of(ConfigKey.AUTH_OAUTH_JWKS_URL, ConfigKey.AUTH_OAUTH_AUDIENCE, ConfigKey.AUTH_OAUTH_ROLES)) {
        if (!str(k).isEmpty()) {
          throw contradiction(k, ConfigKey.AUTH_OAUTH_ISSUER, "is only read when " + ConfigKey.AUTH_OAUTH_ISSUER.key() + " is set");
        }
      }
      return;
    }
    httpUrl(ConfigKey.AUTH_OAUTH_ISSUER, oauth.issuer());
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
  }

  /** An OAuth issuer is read only when authentication is on. */
  void checkOAuthNeedsAuth(OAuthConfig oauth, boolean authEnabled) {
    if (oauth.enabled() && !authEnabled) {
      throw new IllegalArgumentException("config key " + ConfigKey.AUTH_OAUTH_ISSUER.key() + " needs " + ConfigKey.AUTH_ENABLED.key()
          + " true: without authentication no token is read");
    }
  }

  /** Connections of Tidemark's login an approval holds at once (command-service's Proposals.CONNECTIONS). */
  static final int CONSOLE_CONNECTIONS = 2;

  /** console.*: the path must stay clear of the MCP endpoint's, and an OAuth issuer needs the console's client id. */
  void checkConsole(boolean enabled, String path, String clientId, boolean authEnabled, OAuthConfig oauth, List<DatabaseConfig> databases) {
    String mcp = path(ConfigKey.HTTP_PATH);
    if (path.equals("/") || path.equals(mcp) || path.startsWith(mcp + "/") || mcp.startsWith(path + "/")) {
      throw fail(ConfigKey.CONSOLE_PATH, "a path of its own, apart from " + ConfigKey.HTTP_PATH.key() + " (" + mcp + "), such as /console");
    }
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

  /**
   * database.key-only-tables: schema.name, a name in any served schema, schema.* or *, unquoted as
   * PostgreSQL stores the names; matched exactly by the capture's reconcile, so a quoted or
   * wildcarded name that could never match is refused here rather than ignored there.
   */
  List<String> keyOnlyTables() {
    return tables(ConfigKey.DATABASE_KEY_ONLY_TABLES);
  }

  /** database.unplanned-tables, written as {@link #keyOnlyTables()}. */
  List<String> unplannedTables() {
    return tables(ConfigKey.DATABASE_UNPLANNED_TABLES);
  }

  private List<String> tables(ConfigKey k) {
    List<String> out = list(k);
    for (String t : out) {
      int dot = t.indexOf('.');
      String name = dot < 0 ? t : t.substring(dot + 1);
      boolean ok = !t.contains("\"") && !t.contains(" ") && t.indexOf('.', dot + 1) < 0 && dot != 0 && !name.isEmpty()
          && (!name.contains("*") || name.equals("*"))
          && (dot < 0 || !t.substring(0, dot).contains("*"));
      if (!ok) {
        throw fail(k, "a comma-separated list of tables as schema.name, name (in any served schema), schema.* or *, unquoted and"
            + " as PostgreSQL stores the names, such as public.audit_log,events.*; '" + t + "' is none of these");
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
    boolean localHttp = "http".equals(u.getScheme()) && TidemarkConfig.isLoopback(u.getHost());
    if (!(https || localHttp) || u.getHost() == null || u.getRawUserInfo() != null) {
      throw fail(k, "an https URL (http only to a loopback host)");
    }
    return u;
  }

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

  /** role:tool|tool,role:* as a map of role to its tools; "*" stands for every tool. */
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

  IllegalArgumentException contradiction(ConfigKey k, ConfigKey other, String why) {
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

  IllegalArgumentException fail(ConfigKey k, String expected) {
    return new IllegalArgumentException(where(k) + " must be " + expected);
  }

  /** How an error names the key: in an entry of databases, by the entry and the key's last part. */
  private String where(ConfigKey k) {
    return entry != null && k.key().startsWith(DATABASE_PREFIX)
        ? "config key " + entry + " " + k.key().substring(DATABASE_PREFIX.length())
        : "config key " + k.key() + " (" + k.envName() + ")";
  }
}
