package dev.tidemark.node.shipped;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * docs/guides/run-without-kubernetes.md, replayed as written: its bash blocks in order (the block that says where the
 * reader's servers are replaced by this test's), the role SQL of docs/security.md saved as the guide says, the shipped
 * jar (never the build's classpath), and a real PostgreSQL of the Debian packages with {@code fsync} on and password
 * authentication, as an operator's server would be. It all runs in network, process and mount namespaces of its own,
 * so the guide's fixed ports (8080, 9092, 5701...) meet no other test's, and every process it started ends with it.
 */
class OperatorGuideIT {

  static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  static final Path JAR = ROOT.resolve("node/target/tidemark.jar");
  private static final Path GUIDE = ROOT.resolve("docs/guides/run-without-kubernetes.md");
  private static final Path SECURITY = ROOT.resolve("docs/security.md");
  private static final String SUPERUSER_PASSWORD = "guide-superuser-pw";

  /**
   * The test's own steps after the guide's, on the same server, which checks passwords as the suite's does not: a wrong
   * password of Tidemark's login stops a command with the sentence that names its key, and a token whose role's
   * configured password PostgreSQL refuses is not created.
   */
  private static final String REFUSED_PASSWORDS = String.join("\n",
      "# the test's own checks (not the guide's)",
      "printf wrong > wrong-password && mkdir -p wrong-callers && printf wrong > wrong-callers/tidemark_reader",
      "if TIDEMARK_DATABASE_PASSWORD_FILE=$PWD/wrong-password java -jar \"$JAR\" token list --config tidemark.yaml 2> wrong.err; then exit 1; fi",
      "grep -F 'refused the password of the login tidemark: put the login' wrong.err",
      "if TIDEMARK_DATABASE_CALLER_PASSWORD_DIR=$PWD/wrong-callers java -jar \"$JAR\" token create --name wrong --role tidemark_reader"
          + " --config tidemark.yaml 2> wrong-caller.err; then exit 1; fi",
      "grep -F 'role tidemark_reader cannot log in with its configured password' wrong-caller.err",
      "");

  @Test
  void theGuideRunsAsWrittenOnAPostgreSqlWithFsyncOn() throws Exception {
    Namespaces.requireRoot();
    String guide = Files.readString(GUIDE);
    Path work = Namespaces.freshDir(ROOT.resolve("node/target/operator-guide"));
    Path cluster = Files.createDirectories(work.resolve("tidemark-cluster"));
    // the file the guide tells the reader to save from security.md
    Map<String, String> files = GuideScript.files(Files.readString(SECURITY));
    assertTrue(files.containsKey("tidemark-roles.sql"), "security.md marks its role SQL as tidemark-roles.sql");
    Files.writeString(cluster.resolve("tidemark-roles.sql"), files.get("tidemark-roles.sql"));

    String env = String.join("\n",
        "export PGHOST=127.0.0.1 PGPORT=5432 PGDATABASE=app PGUSER=postgres",
        "export PGPASSWORD='" + SUPERUSER_PASSWORD + "'",
        "export KAFKA_BOOTSTRAP=127.0.0.1:9092",
        "export JAR=" + JAR);
    String script = "set -euo pipefail\n"
        + "cd " + work + "\n"
        + PostgresServer.startScript(work.resolve("pg"), 5432, SUPERUSER_PASSWORD, "app")
        + GuideScript.bash(guide, env)
        + REFUSED_PASSWORDS
        + "echo GUIDE-DONE\n";
    Path run = work.resolve("run.sh");
    Files.writeString(run, script);

    Namespaces.Result result = Namespaces.run(run, work.resolve("run.log"), 15, TimeUnit.MINUTES);
    assertEquals(0, result.exitCode(), "the guide's commands ran to the end; the last lines:\n" + result.tail(60));
    assertTrue(result.output().contains("GUIDE-DONE"), result.tail(30));
    for (String shown : GuideScript.outputs(guide)) {
      assertTrue(withoutVersions(result.output()).contains(withoutVersions(shown)), "the guide shows this output, and the run printed it: "
          + shown + "\nthe last lines:\n" + result.tail(40));
    }
    assertTrue(result.output().contains("fsync=on"), "the server ran with fsync on: " + result.tail(40));
  }

  /** The schema version and the migrations applied, which every new migration changes, masked on both sides. */
  static String withoutVersions(String text) {
    return text.replaceAll("schema is at version \\d+ \\(applied \\[[0-9, ]+\\]\\)", "schema is at version N (applied [1, ..., N])");
  }

  static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "";
    }
  }
}
