package dev.tidemark.node.cli;

import dev.tidemark.database.Pools;
import dev.tidemark.auth.Tokens;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.ConfigLoader;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.database.Pools;
import dev.tidemark.node.TidemarkNode;
import dev.tidemark.node.dev.DevEnvironment;
import dev.tidemark.node.dev.DevSetup;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tidemark dev}: everything in one process, with an embedded PostgreSQL, an embedded Kafka
 * broker and a demo database. Once ready it prints the endpoint, both tokens and a psql URL, one a
 * line, for scripts to read.
 */
@Command(name = "dev", mixinStandardHelpOptions = true,
    description = "Runs every role in one process with an embedded PostgreSQL, Kafka and a demo database.")
final class DevCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--http-port", paramLabel = "N", defaultValue = "8080", description = "Port of the MCP endpoint (default: ${DEFAULT-VALUE}).")
  int httpPort;

  @Option(names = "--ops-port", paramLabel = "N", defaultValue = "9090", description = "Port of /health/live and /health/ready (default: ${DEFAULT-VALUE}).")
  int opsPort;

  @Option(names = "--cluster-port", paramLabel = "N", defaultValue = "5701", description = "First port the cluster member tries (default: ${DEFAULT-VALUE}).")
  int clusterPort;

  @Option(names = "--data-dir", paramLabel = "DIR", description = "Keep the database and the broker's data here between runs (default: a temporary folder, removed on exit).")
  Path dataDir;

  @Option(names = "--database-url", paramLabel = "URL", description = "Serve this existing PostgreSQL instead of an embedded one:"
      + " postgresql://user:password@host:port/database (the login needs CREATE, CREATEROLE and REPLICATION; wal_level = logical)."
      + " Tidemark's schema is installed in it; the demo tables only with --demo.")
  String databaseUrl;

  @Option(names = "--demo", description = "Create the demo tables in the database given by --database-url (always done for the embedded one).")
  boolean demo;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file whose keys (docs/configuration.md) apply on top of"
      + " dev mode's own settings, as do TIDEMARK_* variables; the flags above win when given. The database and broker connection"
      + " keys stay dev mode's: use --database-url.")
  Path configFile;

  @Option(names = "--token", paramLabel = "T", description = "The read-write caller's token (default: a new random token).")
  String token;

  @Override
  public Integer call() throws Exception {
    for (var port : Map.of("--http-port", httpPort, "--ops-port", opsPort, "--cluster-port", clusterPort).entrySet()) {
      if (port.getValue() < 0 || port.getValue() > 65535) {
        throw new CommandLine.ParameterException(spec.commandLine(), port.getKey() + ": must be a port between 0 and 65535");
      }
    }
    try {
      userConfig = userConfig(ConfigLoader.fromFileAndEnvironment(configFile, System.getenv()));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    String readWrite;
    try {
      readWrite = token == null ? Tokens.generate() : Tokens.requireWellFormed(token);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--token: " + e.getMessage());
    }
    String readOnly = Tokens.generate();

    long started = System.nanoTime();
    if (databaseUrl != null) {
      try {
        external = new External(URI.create(databaseUrl));
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--database-url: " + e.getMessage());
      }
    }
    DevEnvironment env = DevEnvironment.start(dataDir, external == null);
    TidemarkNode node;
    try {
      prepare(env, readWrite, readOnly);
      node = TidemarkNode.start(config(env)).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } catch (Exception e) {
      env.close();
      if (external != null) {
        // what was installed before the failure stays, and an idle replication slot keeps WAL on the user's server
        spec.commandLine().getErr().println("tidemark dev: the start failed; anything it had installed in " + external.shown()
            + " (schema tidemark, the publication, the replication slot) stays there until you run: tidemark uninstall"
            + " --database-url <the same URL> --yes");
      }
      throw e;
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    PrintWriter out = spec.commandLine().getOut();
    out.println("Tidemark ready: http://127.0.0.1:" + node.httpPort() + node.config().http().path());
    out.println("Token: " + readWrite);
    out.println("Read-only token: " + readOnly);
    out.println("PostgreSQL: " + (external != null ? external.shown()
        : env.postgres().url(DevEnvironment.DEMO_DATABASE).replace("postgresql://",
            "postgresql://" + env.postgres().user() + (env.postgres().password().isEmpty() ? "" : ":" + env.postgres().password()) + "@")));
    out.println("Health: http://127.0.0.1:" + node.opsPort() + "/health/ready");
    if (node.config().console().enabled()) {
      out.println("Console: http://127.0.0.1:" + node.httpPort() + node.config().console().path() + " (sign in with the Token)");
    }
    out.println("Started in " + millis + " ms. Stop with Ctrl-C.");
    out.flush();
    NodeRunner.runUntilStopped(node, env::close);
    return 0;
  }

  private void prepare(DevEnvironment env, String readWrite, String readOnly) throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      Pool pool = Pools.create(vertx, config(env).database());
      DevSetup.prepare(pool, readWrite, readOnly, callerPasswords, external == null || demo).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private External external;

  /** An existing PostgreSQL named by --database-url: the URL without its credentials, and the credentials. */
  record External(String url, String user, String password) {
    External(URI u) {
      this(new URI2(u).bare(), new URI2(u).user(), new URI2(u).password());
    }

    String shown() {
      return url.replace("postgresql://", "postgresql://" + user + "@");
    }

    /** The database keys that name this PostgreSQL and its login. */
    Map<ConfigKey, String> keys() {
      return Map.of(ConfigKey.DATABASE_URL, url, ConfigKey.DATABASE_USER, user, ConfigKey.DATABASE_PASSWORD, password);
    }
  }

  /** The parts of a postgresql:// URL. */
  private record URI2(URI u) {
    URI2 {
      if (!"postgresql".equals(u.getScheme()) && !"postgres".equals(u.getScheme())) {
        throw new IllegalArgumentException("expected postgresql://user:password@host:port/database, got scheme " + u.getScheme());
      }
      if (u.getHost() == null) {
        throw new IllegalArgumentException("names no host");
      }
    }

    String bare() {
      return "postgresql://" + u.getHost() + ":" + (u.getPort() < 0 ? 5432 : u.getPort()) + (u.getPath() == null ? "" : u.getPath());
    }

    String user() {
      String info = u.getUserInfo();
      return info == null ? "postgres" : info.split(":", 2)[0];
    }

    String password() {
      String info = u.getUserInfo();
      return info == null || !info.contains(":") ? "" : info.split(":", 2)[1];
    }
  }

  /** New on every start: the caller roles' logins exist only for this run's node. */
  private final Map<String, String> callerPasswords = Map.of(
      DevSetup.WRITER_ROLE, Tokens.generate(), DevSetup.READER_ROLE, Tokens.generate());

  /**
   * Keys whose values dev mode makes itself (the embedded database and broker, the caller roles'
   * passwords of this run): set from a file they would point the node away from what dev mode
   * prepared.
   */
  static final Set<ConfigKey> DEV_OWNED = EnumSet.of(ConfigKey.DATABASE_URL, ConfigKey.DATABASE_USER, ConfigKey.DATABASE_PASSWORD,
      ConfigKey.DATABASE_PASSWORD_FILE, ConfigKey.DATABASE_CALLER_PASSWORDS, ConfigKey.DATABASE_CALLER_PASSWORD_DIR,
      ConfigKey.KAFKA_BOOTSTRAP_SERVERS, ConfigKey.DATABASES);

  private Map<ConfigKey, String> userConfig = Map.of();

  private static Map<ConfigKey, String> userConfig(Map<ConfigKey, String> given) {
    for (ConfigKey key : given.keySet()) {
      if (DEV_OWNED.contains(key)) {
        throw new IllegalArgumentException(key.key() + " (or " + key.envName() + ") cannot be set in dev mode, which runs its own"
            + " database and broker; use --database-url to serve an existing PostgreSQL, or 'tidemark serve' for your own setup");
      }
    }
    return given;
  }

  /** Dev mode's defaults, then the config file and the environment, then the flags given on the command line. */
  private TidemarkConfig config(DevEnvironment env) {
    Map<ConfigKey, String> v = new EnumMap<>(ConfigKey.class);
    v.put(ConfigKey.HTTP_HOST, "127.0.0.1");
    v.put(ConfigKey.HTTP_PORT, String.valueOf(httpPort));
    v.put(ConfigKey.OPS_HOST, "127.0.0.1");
    v.put(ConfigKey.OPS_PORT, String.valueOf(opsPort));
    if (external != null) {
      v.putAll(external.keys());
    } else {
      v.put(ConfigKey.DATABASE_URL, env.postgres().url(DevEnvironment.DEMO_DATABASE));
      v.put(ConfigKey.DATABASE_USER, env.postgres().user());
      v.put(ConfigKey.DATABASE_PASSWORD, env.postgres().password());
    }
    v.put(ConfigKey.DATABASE_CALLER_PASSWORDS, DevSetup.WRITER_ROLE + ":" + callerPasswords.get(DevSetup.WRITER_ROLE) + ","
        + DevSetup.READER_ROLE + ":" + callerPasswords.get(DevSetup.READER_ROLE));
    v.put(ConfigKey.KAFKA_BOOTSTRAP_SERVERS, env.kafka().bootstrapServers());
    // a cluster of its own, so that two dev processes on one machine never join each other
    byte[] suffix = new byte[4];
    new SecureRandom().nextBytes(suffix);
    v.put(ConfigKey.CLUSTER_NAME, "tidemark-dev-" + HexFormat.of().formatHex(suffix));
    v.put(ConfigKey.CLUSTER_HOST, "127.0.0.1");
    v.put(ConfigKey.CLUSTER_PORT, String.valueOf(clusterPort));
    // the console, on in dev: the developer signs in with the read-write token, and decides the proposals of its agents
    // (not with an OAuth issuer of the user's config that names no client for the console: people would have no way in)
    boolean issuerWithoutClient = userConfig.containsKey(ConfigKey.AUTH_OAUTH_ISSUER) && !userConfig.containsKey(ConfigKey.CONSOLE_OAUTH_CLIENT_ID);
    v.put(ConfigKey.CONSOLE_ENABLED, String.valueOf(!issuerWithoutClient));
    v.put(ConfigKey.CONSOLE_ADMINISTRATORS, "dev-read-write");
    v.put(ConfigKey.DATABASE_APPROVERS, "dev-read-write");
    boolean ownTools = java.util.stream.Stream.of(ConfigKey.DATABASE_TOOLS, ConfigKey.DATABASE_TOOLSETS, ConfigKey.DATABASE_CONSUMERS,
        ConfigKey.DATABASE_TOOLS_FILE).anyMatch(userConfig::containsKey);
    if (external == null && !ownTools) {
      // the demo database's own tools: a file or variable that defines tools replaces them whole
      v.putAll(DevSetup.demoTools());
    }
    v.putAll(userConfig);
    CommandLine.ParseResult given = spec.commandLine().getParseResult();
    if (given.hasMatchedOption("--http-port")) {
      v.put(ConfigKey.HTTP_PORT, String.valueOf(httpPort));
    }
    if (given.hasMatchedOption("--ops-port")) {
      v.put(ConfigKey.OPS_PORT, String.valueOf(opsPort));
    }
    if (given.hasMatchedOption("--cluster-port")) {
      v.put(ConfigKey.CLUSTER_PORT, String.valueOf(clusterPort));
    }
    if (!userConfig.containsKey(ConfigKey.CLUSTER_MEMBERS)) {
      v.put(ConfigKey.CLUSTER_MEMBERS, "127.0.0.1:" + v.get(ConfigKey.CLUSTER_PORT));
    }
    return ConfigLoader.resolve(v);
  }
}
