package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Version;
import org.junit.jupiter.api.Test;

class CliTest {

  private static Cli.Run run(String... args) {
    return Cli.run(args);
  }

  @Test
  void versionPrintsTidemarksVersion() {
    Cli.Run r = run("--version");
    assertEquals(0, r.code());
    assertEquals("tidemark " + Version.get(), r.out().trim());
  }

  @Test
  void everyCommandHasHelp() {
    for (String[] args : new String[][] {{"--help"}, {"dev", "--help"}, {"serve", "--help"}, {"migrate", "--help"}, {"doctor", "--help"}, {"uninstall", "--help"}}) {
      Cli.Run r = run(args);
      assertEquals(0, r.code(), String.join(" ", args));
      assertTrue(r.out().contains("Usage: tidemark"), r.out());
    }
    assertTrue(run("dev", "--help").out().contains("--data-dir"));
    assertTrue(run("serve", "--help").out().contains("--roles"));
    assertTrue(run("dev", "--help").out().contains("--database-url"));
  }

  @Test
  void uninstallWithoutYesChangesNothing() {
    Cli.Run r = run("uninstall");
    assertEquals(2, r.code(), r.out());
    assertTrue(r.err().contains("--yes"), r.err());
  }

  @Test
  void uninstallTakesTheDatabaseOfTheUrlDevModeWasGiven() {
    Cli.Run r = run("uninstall", "--database-url", "postgresql://me:secret@127.0.0.1:1/mydb");
    assertEquals(2, r.code(), r.err());
    assertTrue(r.err().contains("database mydb") && r.err().contains("--yes"), r.err());
    Cli.Run bad = run("uninstall", "--database-url", "mysql://127.0.0.1/mydb", "--yes");
    assertEquals(2, bad.code(), bad.err());
    assertTrue(bad.err().contains("--database-url"), bad.err());
  }

  @Test
  void anUnknownFlagExitsWithTwoAndNamesIt() {
    Cli.Run r = run("dev", "--http-prot", "9000");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("--http-prot"), r.err());
    Cli.Run root = run("--frobnicate");
    assertEquals(2, root.code());
    assertTrue(root.err().contains("--frobnicate"), root.err());
  }

  @Test
  void anUnknownRoleExitsWithTwoAndNamesIt() {
    Cli.Run r = run("serve", "--roles", "gateway,quarry");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("quarry"), r.err());
  }

  @Test
  void anUnknownCommandExitsWithTwoAndNamesIt() {
    Cli.Run r = run("deploy");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("deploy"), r.err());
  }

  @Test
  void anOutOfRangePortIsAUsageError() {
    Cli.Run r = run("dev", "--http-port", "70000");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("--http-port"), r.err());
  }

  @Test
  void aMissingConfigFileIsAUsageError() {
    Cli.Run r = run("serve", "--config", "/nonexistent/tidemark.yaml");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("/nonexistent/tidemark.yaml"), r.err());
  }

  @Test
  void contradictingKeysStopServeWithTheLineTheDocsShow(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    java.nio.file.Path file = dir.resolve("tidemark.yaml");
    java.nio.file.Files.writeString(file, "http.port: 9090\n");
    Cli.Run r = run("serve", "--config", file.toString());
    assertEquals(2, r.code());
    String line = "tidemark: config keys http.port and ops.port are both 9090: one node cannot listen twice on one port; "
        + "give ops.port (TIDEMARK_OPS_PORT) another";
    assertEquals(line, r.err().strip());
    assertTrue(java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "configuration.md")).contains("`" + line + "`"),
        "docs/configuration.md shows the line");
  }
}
