package dev.tidemark.node.dev;

import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.devstack.EmbeddedPostgresServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

/**
 * The parts {@code tidemark dev} starts for itself: an embedded PostgreSQL and a single-node Kafka
 * broker, both real servers on 127.0.0.1, started side by side to halve the wait.
 */
public final class DevEnvironment implements AutoCloseable {

  public static final String DEMO_DATABASE = "tidemark_demo";

  private final EmbeddedPostgresServer postgres;
  private final EmbeddedKafkaBroker kafka;
  private final Path tempDir;

  private DevEnvironment(EmbeddedPostgresServer postgres, EmbeddedKafkaBroker kafka, Path tempDir) {
    this.postgres = postgres;
    this.kafka = kafka;
    this.tempDir = tempDir;
  }

  /** @param dataDir where data outlives the process; null for a temporary folder removed on close */
  public static DevEnvironment start(Path dataDir) throws IOException {
    return start(dataDir, true);
  }

  /**
   * @param withPostgres false when dev mode serves an existing PostgreSQL ({@code --database-url}):
   *     only the broker is started, and {@link #postgres()} is null
   */
  public static DevEnvironment start(Path dataDir, boolean withPostgres) throws IOException {
    Path tempDir = dataDir == null ? Files.createTempDirectory("tidemark-dev-") : null;
    Path root = dataDir == null ? tempDir : dataDir;
    Files.createDirectories(root);
    CompletableFuture<EmbeddedPostgresServer> pg = !withPostgres ? CompletableFuture.completedFuture(null) : CompletableFuture.supplyAsync(() -> {
      try {
        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(root.resolve("postgres"), false); // closed after the node
        server.createDatabaseIfMissing(DEMO_DATABASE);
        return server;
      } catch (Exception e) {
        throw new IllegalStateException("embedded PostgreSQL did not start: " + e.getMessage(), e);
      }
    });
    CompletableFuture<EmbeddedKafkaBroker> broker = CompletableFuture.supplyAsync(() -> {
      try {
        return EmbeddedKafkaBroker.start(root.resolve("kafka"), Map.of());
      } catch (Exception e) {
        throw new IllegalStateException("embedded Kafka did not start: " + e.getMessage(), e);
      }
    });
    try {
      CompletableFuture.allOf(pg, broker).join();
      return new DevEnvironment(pg.join(), broker.join(), tempDir);
    } catch (RuntimeException e) {
      pg.thenAccept(server -> {
        if (server != null) {
          server.close();
        }
      });
      broker.thenAccept(EmbeddedKafkaBroker::close);
      deleteQuietly(tempDir);
      throw e;
    }
  }

  public EmbeddedPostgresServer postgres() {
    return postgres;
  }

  public EmbeddedKafkaBroker kafka() {
    return kafka;
  }

  @Override
  public void close() {
    try {
      kafka.close();
    } finally {
      try {
        if (postgres != null) {
          postgres.close();
        }
      } finally {
        deleteQuietly(tempDir);
      }
    }
  }

  private static void deleteQuietly(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("tidemark: could not remove " + dir + ": " + e.getMessage());
    }
  }
}
