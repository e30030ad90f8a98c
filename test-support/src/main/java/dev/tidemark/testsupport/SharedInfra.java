package dev.tidemark.testsupport;

import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.devstack.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One PostgreSQL server and one Kafka broker shared by every integration test of a test JVM.
 *
 * <p>Each part starts on first use, so a test class that never touches Kafka does not pay for a broker. Obtain it
 * through {@link InfraExtension}; it lives as long as its JVM, and a shutdown hook stops it.
 *
 * <p>Kafka is chosen in this order: an external broker named by the system property {@code kafka.bootstrap.servers}
 * or the environment variable {@code KAFKA_BOOTSTRAP_SERVERS}; a Testcontainers {@code apache/kafka:4.4.0} container
 * when a Docker engine answers; otherwise an {@link EmbeddedKafkaBroker} in this JVM.
 */
public final class SharedInfra {

  /** Kafka mode when the broker runs in this JVM. */
  public static final String KAFKA_EMBEDDED = "embedded";
  /** Kafka mode when an already running broker was named through configuration. */
  public static final String KAFKA_EXTERNAL = "external";
  /** Kafka mode when Testcontainers started a broker in Docker. */
  public static final String KAFKA_TESTCONTAINERS = "testcontainers";

  private static final Object INSTANCE_LOCK = new Object();
  private static SharedInfra instance;

  private final Thread shutdownHook = new Thread(this::shutdown, "tidemark-shared-infra-shutdown");
  private EmbeddedPostgresServer postgres;
  private KafkaHandle kafka;
  private boolean closed;

  /** Whether {@link #kafka} belongs to another instance, which closes it. */
  private boolean borrowedKafka;

  private SharedInfra() {}

  /**
   * The shared broker with a PostgreSQL server of this instance's own, for a test whose writes
   * would burden every other test: the WAL of a million-row update is read again by every
   * replication slot of the shared server, and holds each of them past the slot-lag ceiling.
   * {@link #closeOwn()} stops that server and leaves the broker to the shared instance.
   */
  public static SharedInfra withOwnPostgres(SharedInfra shared) {
    SharedInfra own = new SharedInfra();
    own.kafka = shared.kafka();
    own.borrowedKafka = true;
    own.postgres = EmbeddedPostgresServer.start(null);
    return own;
  }

  /** Stops what {@link #withOwnPostgres} started. */
  public void closeOwn() {
    if (!borrowedKafka) {
      throw new IllegalStateException("only an instance made by withOwnPostgres closes itself; the shared one closes at the end of the run");
    }
    shutdown();
  }

  /**
   * Restarts the PostgreSQL server of an instance made by {@link #withOwnPostgres} as an operator's
   * {@code pg_ctl restart -m fast} does: every session is ended (SQLSTATE 57P01), and the server
   * comes back with the options it had (the same port) and its data, replication slots included.
   * Returns once it accepts connections again.
   */
  public void restartOwnPostgres() {
    if (!borrowedKafka) {
      throw new IllegalStateException("only a PostgreSQL of a test's own may be restarted; the shared one serves every test");
    }
    Path data = postgres.dataDirectory();
    try {
      long pid = Long.parseLong(Files.readAllLines(data.resolve("postmaster.pid")).get(0).trim());
      // pg_ctl sits beside the server binary zonky unpacked, and refuses root: zonky runs it in a user namespace then, and so do we
      Path pgCtl = Path.of(ProcessHandle.of(pid).flatMap(h -> h.info().command())
          .orElseThrow(() -> new IllegalStateException("the postmaster " + pid + " is not running"))).resolveSibling("pg_ctl");
      List<String> command = new ArrayList<>();
      if ("root".equals(System.getProperty("user.name"))) {
        command.addAll(List.of("unshare", "-U"));
      }
      command.addAll(List.of(pgCtl.toString(), "-D", data.toString(), "-m", "fast", "-w", "-t", "60",
          "-l", data.resolve("restart.log").toString(), "restart"));
      Process restart = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(data.resolve("pg_ctl.out").toFile())).start();
      if (!restart.waitFor(90, TimeUnit.SECONDS) || restart.exitValue() != 0 || !Await.until(this::acceptsConnections, Duration.ofSeconds(30))) {
        throw new IllegalStateException("PostgreSQL did not come back; see " + data.resolve("pg_ctl.out") + " and restart.log beside it");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private boolean acceptsConnections() {
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl("postgres"), postgres.user(), postgres.password())) {
      return c.isValid(2);
    } catch (SQLException e) {
      return false;
    }
  }

  /** The live instance of this JVM, created if none is live (again after a previous one was closed). */
  static SharedInfra acquire() {
    synchronized (INSTANCE_LOCK) {
      if (instance == null || instance.isClosed()) {
        instance = new SharedInfra();
        Runtime.getRuntime().addShutdownHook(instance.shutdownHook);
      }
      return instance;
    }
  }

  /** The shared PostgreSQL server, started on first call. */
  public synchronized EmbeddedPostgresServer postgres() {
    ensureOpen();
    if (postgres == null) {
      postgres = EmbeddedPostgresServer.start(null);
    }
    return postgres;
  }

  /** {@code host:port} list of the shared Kafka broker, started (or located) on first call. */
  public String kafkaBootstrapServers() {
    return kafka().bootstrapServers;
  }

  /** How the shared broker is provided: {@code "embedded"}, {@code "external"} or {@code "testcontainers"}. */
  public String kafkaMode() {
    return kafka().mode;
  }

  private synchronized KafkaHandle kafka() {
    ensureOpen();
    if (kafka == null) {
      kafka = selectKafka();
    }
    return kafka;
  }

  private static KafkaHandle selectKafka() {
    String external = System.getProperty("kafka.bootstrap.servers");
    if (external == null || external.isBlank()) {
      external = System.getenv("KAFKA_BOOTSTRAP_SERVERS");
    }
    if (external != null && !external.isBlank()) {
      return new KafkaHandle(external.trim(), KAFKA_EXTERNAL, () -> {});
    }
    if (dockerAvailable()) {
      try {
        return TestcontainersKafka.start();
      } catch (Throwable t) {
        // A Docker engine that cannot pull or run the image should not fail the suite: the embedded broker is
        // just as real.
        System.err.println("[tidemark] Testcontainers Kafka failed (" + t + "); using the embedded broker");
      }
    }
    EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(null, Map.of());
    return new KafkaHandle(broker.bootstrapServers(), KAFKA_EMBEDDED, broker::close);
  }

  private static boolean dockerAvailable() {
    try {
      return TestcontainersKafka.dockerAvailable();
    } catch (Throwable t) {
      // Missing Testcontainers classes or a broken Docker client both mean "no Docker" here.
      return false;
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("the shared test infrastructure was already closed");
    }
  }

  /** Called by JUnit at the end of the run. */
  void close() {
    shutdown();
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // the hook is running or about to; nothing left to undo
    }
  }

  private synchronized void shutdown() {
    if (closed) {
      return;
    }
    closed = true;
    // Kafka first: nothing in Kafka depends on PostgreSQL, but Tidemark's relays read PostgreSQL and write Kafka.
    try {
      if (kafka != null && !borrowedKafka) {
        kafka.closer.close();
      }
    } catch (Exception e) {
      System.err.println("[tidemark] closing Kafka failed: " + e);
    } finally {
      if (postgres != null) {
        postgres.close();
      }
    }
  }

  private static final class KafkaHandle {
    final String bootstrapServers;
    final String mode;
    final AutoCloseable closer;

    KafkaHandle(String bootstrapServers, String mode, AutoCloseable closer) {
      this.bootstrapServers = bootstrapServers;
      this.mode = mode;
      this.closer = closer;
    }
  }

  /** Kept in its own class so Testcontainers is loaded only when probed. */
  private static final class TestcontainersKafka {

    static boolean dockerAvailable() {
      return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
    }

    static KafkaHandle start() {
      org.testcontainers.kafka.KafkaContainer container =
          new org.testcontainers.kafka.KafkaContainer("apache/kafka:4.4.0")
              // The image defaults to three replicas for share-group state; one node needs one.
              .withEnv("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR", "1")
              .withEnv("KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR", "1");
      container.start();
      return new KafkaHandle(container.getBootstrapServers(), KAFKA_TESTCONTAINERS, container::stop);
    }
  }
}
