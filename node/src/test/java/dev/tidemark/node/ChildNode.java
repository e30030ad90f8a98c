package dev.tidemark.node;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@code tidemark serve} node in a JVM of its own, configured through the environment as an
 * operator's container would be, on HTTP and ops ports fixed at creation so that it comes back on
 * the same ones after {@link #kill()} and {@link #start()}. Its standard output and error go to
 * {@code target/<name>.log}.
 */
final class ChildNode implements AutoCloseable {

  static final Path JAR = Path.of("target", "tidemark.jar");
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  final String name;
  volatile int httpPort;
  volatile int opsPort;
  /** The port keys this node was given free ports for, which a failed first start may choose again. */
  private final List<ConfigKey> chosenPorts = new ArrayList<>();
  private int starts;
  private final Map<ConfigKey, String> config;
  private final List<String> jvmFlags;
  private final Path log;
  private volatile Process process;

  /** A node named {@code name} with {@code config} (ports 0 or absent get free ones) and {@code jvmFlags}; not started yet. */
  ChildNode(String name, Map<ConfigKey, String> config, List<String> jvmFlags) {
    this.name = name;
    this.config = new EnumMap<>(config);
    this.httpPort = fixPort(ConfigKey.HTTP_PORT);
    this.opsPort = fixPort(ConfigKey.OPS_PORT);
    this.config.put(ConfigKey.NODE_ID, name);
    this.jvmFlags = List.copyOf(jvmFlags);
    this.log = Path.of("target", name + ".log").toAbsolutePath();
    try {
      Files.deleteIfExists(log); // the log of this test's run only; restarts append to it
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private int fixPort(ConfigKey key) {
    String v = config.getOrDefault(key, "0");
    if ("0".equals(v)) {
      chosenPorts.add(key);
    }
    int port = "0".equals(v) ? FreePorts.allocate() : Integer.parseInt(v);
    config.put(key, String.valueOf(port));
    return port;
  }

  /** Starts the JVM; returns at once (see {@link #awaitReady}). */
  ChildNode start() {
    starts++;
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(jvmFlags);
    if (!jvmFlags.contains(TestNodes.CLIENT_COMPILER)) {
      cmd.add(TestNodes.CLIENT_COMPILER);
    }
    cmd.add("-Djava.io.tmpdir=" + Path.of("target").toAbsolutePath());
    cmd.addAll(List.of("-jar", JAR.toString(), "serve"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    config.forEach((key, value) -> pb.environment().put(key.envName(), value));
    try {
      process = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** Waits until {@code /health/ready} answers 200; fails at once when the process ends, with the end of its log. */
  ChildNode awaitReady(Duration timeout) {
    boolean up = Await.until(() -> !process.isAlive() || ready(), timeout) && process.isAlive();
    if (!up && !process.isAlive() && starts == 1 && !chosenPorts.isEmpty() && portTaken(logTail())) {
      // a port chosen free at creation was taken before the first start (an outgoing connection of
      // another process may get it as its local port): choose the free ports again, once
      for (ConfigKey key : chosenPorts) {
        int port = FreePorts.allocate();
        config.put(key, String.valueOf(port));
        if (key == ConfigKey.HTTP_PORT) {
          httpPort = port;
        } else if (key == ConfigKey.OPS_PORT) {
          opsPort = port;
        }
      }
      return start().awaitReady(timeout);
    }
    if (!up) {
      throw new AssertionError(name + " is not ready after " + timeout + (process.isAlive() ? "" : " (exited " + process.exitValue() + ")")
          + "; the end of " + log + ":\n" + logTail());
    }
    return this;
  }

  /**
   * Whether the node stopped because a port it was given was taken: the node says so in its own
   * words (ConfigKey's "the address is in use"), an exception from below it in the JDK's.
   */
  private static boolean portTaken(String log) {
    return log.contains("the address is in use") || log.contains("Address already in use");
  }

  boolean ready() {
    return readiness().startsWith("200 ");
  }

  /** "status body" of the node's {@code /health/ready}, or "unreachable" and why. */
  String readiness() {
    try {
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + opsPort + "/health/ready"))
          .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() + " " + r.body();
    } catch (IOException e) {
      return "unreachable " + e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "unreachable " + e;
    }
  }

  /** SIGKILL, as {@code kill -9}: no drain, no shutdown hook, the sockets closed by the kernel. Returns once the process is gone. */
  void kill() {
    process.destroyForcibly();
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        throw new AssertionError(name + " outlived SIGKILL");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  long pid() {
    return process.pid();
  }

  String mcpUrl() {
    return "http://127.0.0.1:" + httpPort + "/mcp";
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return e.toString();
    }
  }

  /** Stops the node as SIGTERM does (drain, then leave), forcibly when it takes longer than 30 s. */
  @Override
  public void close() {
    Process p = process;
    if (p == null || !p.isAlive()) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
    }
  }
}
