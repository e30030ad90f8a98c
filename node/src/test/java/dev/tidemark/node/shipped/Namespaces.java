package dev.tidemark.node.shipped;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Runs a test's shell script in network, PID and mount namespaces of its own ({@code unshare}): its servers listen on
 * the fixed ports a guide names without meeting another test's, and when the script ends, every process it started
 * ends with it, whatever it left running.
 */
final class Namespaces {

  record Result(int exitCode, String output) {
    String tail(int lines) {
      List<String> all = output.lines().toList();
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }
  }

  private Namespaces() {}

  /** Namespaces, PostgreSQL run as its own user, and files owned by others need root, which CI has. */
  static void requireRoot() {
    assumeTrue("root".equals(System.getProperty("user.name")),
        "replaying an operator's commands needs root (namespaces of its own, PostgreSQL as the postgres user); CI runs as root");
  }

  static Path freshDir(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return Files.createDirectories(dir);
  }

  static Result run(Path script, Path log, long timeout, TimeUnit unit) throws IOException, InterruptedException {
    Process p = new ProcessBuilder("unshare", "--fork", "--pid", "--mount", "--net", "--kill-child", "--mount-proc", "bash", script.toString())
        .directory(script.getParent().toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean ended = p.waitFor(timeout, unit);
    if (!ended) {
      p.destroyForcibly().waitFor();
    }
    String output;
    try {
      output = Files.readString(log);
    } catch (UncheckedIOException e) {
      output = "";
    }
    return new Result(ended ? p.exitValue() : -1, output);
  }
}
