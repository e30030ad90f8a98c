package dev.tidemark.node;

import static dev.tidemark.node.DevModeIT.psql;
import static dev.tidemark.node.DevModeIT.start;
import static dev.tidemark.node.DevModeIT.stop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.node.DevModeIT.Dev;
import dev.tidemark.testsupport.McpHttpClient;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar tidemark.jar dev --data-dir} as a user runs it, three times over one folder: a
 * class of its own (three dev starts), so that the test JVMs share the long dev mode tests.
 */
class DevModeDataDirIT {


  // one data dir through three runs (a stop, then a kill -9): each dev start costs seconds, so the two cases share one
  @Test
  void aDataDirKeepsTheDatabaseBetweenRunsAndStartsOnTheFirstTryAfterItsProcessWasKilled(@TempDir Path dataDir) throws Exception {
    Dev first = start(List.of("--data-dir", dataDir.toString()));
    try (Connection conn = psql(first)) {
      conn.createStatement().execute("INSERT INTO customers(name, email) VALUES ('Kept Between Runs', 'kept@example.com')");
    } finally {
      stop(first);
    }
    assertTrue(Files.isDirectory(dataDir.resolve("postgres")) && Files.isDirectory(dataDir.resolve("kafka")));

    Dev second = start(List.of("--data-dir", dataDir.toString()));
    try (Connection conn = psql(second)) {
      assertEquals(1, count(conn, "SELECT count(*) FROM customers WHERE email = 'kept@example.com'"), "a stopped run's data is kept");
      assertKafkaReachable(second);
      conn.createStatement().execute("INSERT INTO customers(name, email) VALUES ('Survives Kill', 'kill9@example.com')");
    }
    second.process().destroyForcibly(); // SIGKILL: no shutdown hook runs, so nothing stops the embedded PostgreSQL
    assertTrue(second.process().waitFor(30, TimeUnit.SECONDS));
    Path pidFile = dataDir.resolve("postgres").resolve("postmaster.pid");
    long orphan = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
    ProcessHandle postmaster = ProcessHandle.of(orphan).orElse(null);
    try {
      assertTrue(postmaster != null && postmaster.isAlive(), "the killed run left its PostgreSQL running");
      Dev third = start(List.of("--data-dir", dataDir.toString()));
      try (Connection conn = psql(third)) {
        assertFalse(postmaster.isAlive(), "the third run stopped the server the killed one left");
        assertEquals(1, count(conn, "SELECT count(*) FROM customers WHERE email = 'kill9@example.com'"), "the data written before the kill is kept");
        assertEquals(1, count(conn, "SELECT count(*) FROM customers WHERE email = 'kept@example.com'"));
        assertKafkaReachable(third);
      } finally {
        stop(third);
      }
      assertTrue(third.stderr().contains("stopped the PostgreSQL server (pid " + orphan + ")"),
          "the third run says what it stopped");
    } finally {
      if (postmaster != null) {
        postmaster.destroyForcibly();
      }
    }
  }

  private static int count(Connection conn, String sql) throws Exception {
    try (ResultSet rs = conn.createStatement().executeQuery(sql)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  private static void assertKafkaReachable(Dev dev) throws Exception {
    try (McpHttpClient c = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Token"))) {
      c.initialize();
      assertTrue(c.callTool("status", new JsonObject()).getJsonObject("structuredContent").getJsonObject("kafka").getBoolean("reachable"));
    }
  }
}
