package dev.tidemark.devstack;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * A real PostgreSQL 17 server (zonky embedded binaries) on 127.0.0.1, for {@code tidemark dev} and for tests.
 *
 * <p>Authentication: the cluster is created by zonky with {@code initdb -A trust}, so the superuser {@code postgres}
 * is accepted with any password; {@link #password()} returns {@code "postgres"} so that clients which insist on a
 * password have one. The server only listens on 127.0.0.1, which is what keeps trust auth acceptable.
 *
 * <p>Settings favour speed over durability (fsync and synchronous_commit off, the WAL flushed every 10 ms
 * so that decoding still follows commits closely) and enable logical decoding ({@code wal_level=logical})
 * for the changelog.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

  private static final String HOST = "127.0.0.1";
  private static final String SUPERUSER = "postgres";
  private static final String PASSWORD = "postgres";
  private static final Pattern DB_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private final EmbeddedPostgres postgres;
  private final Path dataDirectory;
  private final int port;
  private final AtomicBoolean closed = new AtomicBoolean();

  private EmbeddedPostgresServer(EmbeddedPostgres postgres, Path dataDirectory, int port) {
    this.postgres = postgres;
    this.dataDirectory = dataDirectory;
    this.port = port;
  }

  /**
   * Starts a server and blocks until it accepts connections.
   *
   * @param dataDir null for a throw-away cluster in a temporary folder that {@link #close()} deletes; otherwise a
   *     folder whose cluster is kept between runs (created by initdb the first time, reused afterwards)
   */
  public static EmbeddedPostgresServer start(Path dataDir) {
    return start(dataDir, Map.of(), true);
  }

  /** Like {@link #start(Path)}, with more server settings (such as {@code ssl}) over the defaults. */
  public static EmbeddedPostgresServer start(Path dataDir, Map<String, String> settings) {
    return start(dataDir, settings, true);
  }

  /**
   * @param stopOnExit false when the caller stops the server itself on exit, after what uses it: the
   *     JVM runs shutdown hooks at once, so a hook of its own would stop PostgreSQL under a node still
   *     closing its connections
   */
  public static EmbeddedPostgresServer start(Path dataDir, boolean stopOnExit) {
    return start(dataDir, Map.of(), stopOnExit);
  }

  /** The general form of the above: more server settings, and whether to stop on the JVM's exit. */
  public static EmbeddedPostgresServer start(Path dataDir, Map<String, String> settings, boolean stopOnExit) {
    int port = FreePorts.allocate();
    EmbeddedPostgres.Builder builder =
        EmbeddedPostgres.builder()
            // zonky would pick its port on the wildcard address; we want to own the loopback-only choice.
            .setPort(port)
            .setServerConfig("listen_addresses", HOST)
            .setServerConfig("fsync", "off")
            .setServerConfig("synchronous_commit", "off")
            // with synchronous_commit off, a commit's WAL reaches logical decoding only when the WAL
            // writer flushes it, every wal_writer_delay (200 ms by default): every change would reach
            // the changelog, watches and events up to 200 ms late
            .setServerConfig("wal_writer_delay", "10ms")
            .setServerConfig("full_page_writes", "off")
            .setServerConfig("wal_level", "logical")
            // one slot per served database (tests make a database per class), streamed by one sender each
            .setServerConfig("max_replication_slots", "64")
            .setServerConfig("max_wal_senders", "64")
            .setServerConfig("max_connections", "200")
            // A 2-core machine running several builds can take well over zonky's 10 s default.
            .setPGStartupWait(Duration.ofSeconds(60))
            .setRegisterShutdownHook(stopOnExit);
    settings.forEach(builder::setServerConfig);
    try {
      Path resolvedDataDir;
      if (dataDir == null) {
        resolvedDataDir = Files.createTempDirectory("tidemark-pg");
        builder.setDataDirectory(resolvedDataDir).setCleanDataDirectory(true);
      } else {
        resolvedDataDir = dataDir.toAbsolutePath();
        Files.createDirectories(resolvedDataDir);
        // a previous run killed before it could stop its server left it holding the folder
        OrphanedPostmaster.stopIfRunning(resolvedDataDir).ifPresent(pid -> System.err.println(
            "tidemark: stopped the PostgreSQL server (pid " + pid + ") that a previous run left running on " + resolvedDataDir));
        // zonky runs initdb only when postgresql.conf is missing, so an existing cluster is reused untouched.
        builder.setDataDirectory(resolvedDataDir).setCleanDataDirectory(false);
      }
      return new EmbeddedPostgresServer(builder.start(), resolvedDataDir, port);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start embedded PostgreSQL", e);
    }
  }

  public String host() {
    return HOST;
  }

  public int port() {
    return port;
  }

  /** The superuser created by initdb. */
  public String user() {
    return SUPERUSER;
  }

  /** Any password is accepted (trust authentication, loopback only); this one is returned for clients that need one. */
  public String password() {
    return PASSWORD;
  }

  /** The folder holding the cluster's data. */
  public Path dataDirectory() {
    return dataDirectory;
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/<db>}; pass {@link #user()} and {@link #password()} separately. */
  public String jdbcUrl(String db) {
    return "jdbc:postgresql://" + HOST + ":" + port + "/" + db;
  }

  /** {@code postgresql://127.0.0.1:<port>/<db>}, the form Tidemark's configuration and the Vert.x client accept. */
  public String url(String db) {
    return "postgresql://" + HOST + ":" + port + "/" + db;
  }

  /** Creates database {@code name} unless it exists; {@code name} must be a lower-case SQL identifier. */
  public void createDatabaseIfMissing(String name) {
    if (name == null || !DB_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("database name must match " + DB_NAME.pattern() + ": " + name);
    }
    try (Connection c = DriverManager.getConnection(jdbcUrl("postgres"), SUPERUSER, PASSWORD)) {
      try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
        ps.setString(1, name);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      try (Statement st = c.createStatement()) {
        // The name is validated above; CREATE DATABASE cannot take a bind parameter.
        st.execute("CREATE DATABASE " + name);
      } catch (SQLException e) {
        // duplicate_database: another caller created it between our check and our CREATE.
        if (!"42P04".equals(e.getSQLState())) {
          throw e;
        }
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not create database " + name, e);
    }
  }

  /** Stops the server (waiting for the postmaster to exit) and deletes a temporary data folder. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    Optional<ProcessHandle> postmaster = readPostmasterPid().flatMap(ProcessHandle::of);
    try {
      postgres.close();
    } catch (IOException e) {
      // fall through to the forced stop below
    }
    // zonky logs and swallows a failed "pg_ctl stop"; make sure nothing outlives us anyway.
    postmaster.ifPresent(EmbeddedPostgresServer::awaitExitOrKill);
  }

  private Optional<Long> readPostmasterPid() {
    try {
      List<String> lines = Files.readAllLines(dataDirectory.resolve("postmaster.pid"), StandardCharsets.UTF_8);
      return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).trim()));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private static void awaitExitOrKill(ProcessHandle process) {
    try {
      process.onExit().get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    } catch (Exception e) {
      process.destroyForcibly();
    }
  }
}
