package dev.tidemark.devstack;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;

/**
 * A real single-node KRaft Kafka broker (combined broker and controller) running in this JVM on 127.0.0.1, for
 * {@code tidemark dev} and for tests.
 *
 * <p>The controller quorum is configured statically ({@code controller.quorum.voters}) rather than through the
 * dynamic KIP-853 voter set, because a persistent log folder is restarted on fresh ports every run and a static voter
 * list takes its endpoint from the current configuration instead of from what was recorded at format time.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

  private static final String HOST = "127.0.0.1";
  private static final String NODE_ID = "1";

  private final KafkaRaftServer server;
  private final Path logDir;
  private final boolean temporary;
  private final String bootstrapServers;
  private final Map<String, String> extraListeners;
  private final AtomicBoolean closed = new AtomicBoolean();

  private EmbeddedKafkaBroker(KafkaRaftServer server, Path logDir, boolean temporary, String bootstrapServers,
      Map<String, String> extraListeners) {
    this.server = server;
    this.logDir = logDir;
    this.temporary = temporary;
    this.bootstrapServers = bootstrapServers;
    this.extraListeners = Map.copyOf(extraListeners);
  }

  /**
   * Formats (when needed) and starts the broker, blocking until it is unfenced and serving.
   *
   * @param logDir null for a temporary folder that {@link #close()} deletes; otherwise a folder whose data is kept and
   *     reused (formatted only when it holds no {@code meta.properties} yet)
   * @param extraConfig broker settings that override the defaults; may be null
   */
  public static EmbeddedKafkaBroker start(Path logDir, Map<String, String> extraConfig) {
    return start(logDir, extraConfig, List.of());
  }

  /**
   * Like {@link #start(Path, Map)}, with one more listener for each of {@code extraProtocols} (such as
   * {@code SASL_SSL}), named after its protocol, on a port of its own; {@code extraConfig} carries what
   * the protocol needs (key store, SASL users). {@link #bootstrapServers(String)} gives its address.
   */
  public static EmbeddedKafkaBroker start(Path logDir, Map<String, String> extraConfig, List<String> extraProtocols) {
    return start(logDir, HOST, 0, extraConfig, extraProtocols);
  }

  /**
   * A broker whose clients reach it at {@code host:port} ({@code tidemark kafka}, a broker for a trial on one machine);
   * its controller listens on a free port of the same host, chosen anew on every start.
   */
  public static EmbeddedKafkaBroker startOn(Path logDir, String host, int port) {
    return start(logDir, host, port, Map.of(), List.of());
  }

  private static EmbeddedKafkaBroker start(Path logDir, String host, int port, Map<String, String> extraConfig,
      List<String> extraProtocols) {
    boolean temporary = logDir == null;
    Path dir;
    try {
      dir = temporary ? Files.createTempDirectory("tidemark-kafka") : logDir.toAbsolutePath();
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("could not create the Kafka log folder", e);
    }
    try {
      int[] ports = FreePorts.allocate(2 + extraProtocols.size());
      if (port > 0) {
        ports[0] = port;
      }
      Map<String, String> listeners = new LinkedHashMap<>();
      for (int i = 0; i < extraProtocols.size(); i++) {
        listeners.put(extraProtocols.get(i), host + ":" + ports[2 + i]);
      }
      Map<String, String> config = new LinkedHashMap<>(extraConfig == null ? Map.of() : extraConfig);
      if (!listeners.isEmpty()) {
        StringBuilder names = new StringBuilder();
        StringBuilder protocols = new StringBuilder();
        listeners.forEach((protocol, address) -> {
          names.append(',').append(protocol).append("://").append(address);
          protocols.append(',').append(protocol).append(':').append(protocol);
        });
        config.put("listeners", "PLAINTEXT://" + host + ":" + ports[0] + ",CONTROLLER://" + host + ":" + ports[1] + names);
        config.put("advertised.listeners", "PLAINTEXT://" + host + ":" + ports[0] + names);
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" + protocols);
      }
      Properties props = brokerConfig(dir, host, ports[0], ports[1], config);
      if (!Files.exists(dir.resolve("meta.properties"))) {
        format(props);
      }
      KafkaRaftServer server = new KafkaRaftServer(KafkaConfig.fromProps(props, false), Time.SYSTEM);
      try {
        server.startup();
      } catch (RuntimeException | Error e) {
        stopQuietly(server);
        throw e;
      }
      return new EmbeddedKafkaBroker(server, dir, temporary, host + ":" + ports[0], listeners);
    } catch (RuntimeException | Error e) {
      if (temporary) {
        deleteRecursively(dir);
      }
      throw e;
    }
  }

  private static Properties brokerConfig(Path dir, String host, int brokerPort, int controllerPort, Map<String, String> extra) {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("process.roles", "broker,controller");
    c.put("node.id", NODE_ID);
    c.put("controller.quorum.voters", NODE_ID + "@" + host + ":" + controllerPort);
    c.put("listeners", "PLAINTEXT://" + host + ":" + brokerPort + ",CONTROLLER://" + host + ":" + controllerPort);
    c.put("advertised.listeners", "PLAINTEXT://" + host + ":" + brokerPort);
    c.put("controller.listener.names", "CONTROLLER");
    c.put("inter.broker.listener.name", "PLAINTEXT");
    c.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    c.put("log.dirs", dir.toString());
    c.put("num.partitions", "1");
    c.put("default.replication.factor", "1");
    c.put("min.insync.replicas", "1");
    // Internal topics default to three replicas, which a single node can never satisfy.
    c.put("offsets.topic.replication.factor", "1");
    c.put("offsets.topic.num.partitions", "1");
    c.put("transaction.state.log.replication.factor", "1");
    c.put("transaction.state.log.min.isr", "1");
    c.put("transaction.state.log.num.partitions", "1");
    // Without these, share consumers silently receive nothing on a single node.
    c.put("share.coordinator.state.topic.replication.factor", "1");
    c.put("share.coordinator.state.topic.min.isr", "1");
    c.put("share.coordinator.state.topic.num.partitions", "1");
    c.put("group.initial.rebalance.delay.ms", "0");
    // Short locks and heartbeats so redelivery and membership changes show up within a test's patience.
    c.put("group.share.min.record.lock.duration.ms", "1000");
    c.put("group.share.heartbeat.interval.ms", "500");
    c.put("group.share.min.heartbeat.interval.ms", "500");
    // Tidemark creates its topics explicitly; an implicit topic would hide a missing setup step.
    c.put("auto.create.topics.enable", "false");
    if (extra != null) {
      c.putAll(extra);
    }
    Properties props = new Properties();
    props.putAll(c);
    return props;
  }

  private static void format(Properties props) {
    Path configFile = null;
    try {
      configFile = Files.createTempFile("tidemark-kafka-", ".properties");
      try (OutputStream out = Files.newOutputStream(configFile)) {
        props.store(out, "Tidemark embedded broker");
      }
      ByteArrayOutputStream output = new ByteArrayOutputStream();
      int rc;
      try (PrintStream ps = new PrintStream(output, true, StandardCharsets.UTF_8)) {
        // No --standalone: the static voter list in the config replaces the dynamic bootstrap quorum.
        rc = StorageTool.execute(
            new String[] {"format", "-t", Uuid.randomUuid().toString(), "-c", configFile.toString()}, ps);
      }
      if (rc != 0) {
        throw new IllegalStateException(
            "kafka storage format failed (" + rc + "): " + output.toString(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not format the Kafka log folder", e);
    } finally {
      if (configFile != null) {
        try {
          Files.deleteIfExists(configFile);
        } catch (IOException ignored) {
          // a stray temp file is harmless
        }
      }
    }
  }

  /** {@code 127.0.0.1:<port>} of the PLAINTEXT listener. */
  public String bootstrapServers() {
    return bootstrapServers;
  }

  /** The address of the extra listener for {@code protocol} given to {@link #start(Path, Map, List)}. */
  public String bootstrapServers(String protocol) {
    String address = extraListeners.get(protocol);
    if (address == null) {
      throw new IllegalArgumentException("this broker has no " + protocol + " listener");
    }
    return address;
  }

  /** The folder holding the broker's data. */
  public Path logDir() {
    return logDir;
  }

  /** Shuts the broker down in a controlled way, waits for it, and deletes a temporary log folder. Idempotent. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      stopQuietly(server);
    } finally {
      if (temporary) {
        deleteRecursively(logDir);
      }
    }
  }

  private static void stopQuietly(KafkaRaftServer server) {
    try {
      server.shutdown();
      server.awaitShutdown();
    } catch (RuntimeException e) {
      // shutting down a half-started broker may fail; the caller only needs its threads gone
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> {
        try {
          Files.deleteIfExists(p);
        } catch (IOException ignored) {
          // best effort: a leftover temp file does no harm
        }
      });
    } catch (IOException ignored) {
      // best effort, as above
    }
  }
}
