package dev.tidemark.node.shipped;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The fat jar people run, {@code node/target/tidemark.jar}, started with {@code java -jar} in a JVM of its own: never
 * the build's classpath, so a class the jar lacks fails here as it fails for them.
 */
final class ShippedJar {

  static final Path JAR = OperatorGuideIT.JAR;

  record Run(int code, String out, String err) {
    String both() {
      return out + err;
    }
  }

  private ShippedJar() {}

  private static List<String> command(String... args) {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " is missing: the integration tests run after the package phase builds it");
    }
    List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
        "-XX:TieredStopAtLevel=1", "-jar", JAR.toString()));
    cmd.addAll(List.of(args));
    return cmd;
  }

  /** Runs a command to its end (at most {@code timeoutSeconds}) in {@code dir}, with {@code env} added to this one's. */
  static Run run(Path dir, Map<String, String> env, long timeoutSeconds, String... args) throws IOException, InterruptedException {
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    ProcessBuilder pb = new ProcessBuilder(command(args)).directory(dir.toFile())
        .redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.environment().putAll(env);
    Process p = pb.start();
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new AssertionError("tidemark " + String.join(" ", args) + " did not end within " + timeoutSeconds + " s: "
          + Files.readString(out) + Files.readString(err));
    }
    return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
  }

  /** Starts a long-running command ({@code serve}, {@code kafka}), its output going to {@code log}. */
  static Process start(Path dir, Map<String, String> env, Path log, String... args) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command(args)).directory(dir.toFile()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    pb.environment().putAll(env);
    return pb.start();
  }
}
