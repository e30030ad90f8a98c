package dev.tidemark.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EmbeddedPostgresServerIT {

  @Test
  void temporaryServerRunsPostgres17WithLogicalDecodingAndLeavesNothingBehind() throws Exception {
    long t0 = System.nanoTime();
    EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(null);
    System.out.printf("PG temporary start took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
    Path dataDir = pg.dataDirectory();
    int port = pg.port();
    try {
      assertEquals("127.0.0.1", pg.host());
      assertEquals("postgresql://127.0.0.1:" + port + "/postgres", pg.url("postgres"));
      assertTrue(scalar(pg, "postgres", "SELECT version()").contains("PostgreSQL 17"));
      assertEquals("logical", scalar(pg, "postgres", "SHOW wal_level"));
      assertTrue(Integer.parseInt(scalar(pg, "postgres", "SHOW max_replication_slots")) >= 4);
      assertTrue(Integer.parseInt(scalar(pg, "postgres", "SHOW max_wal_senders")) >= 4);
      assertEquals("127.0.0.1", scalar(pg, "postgres", "SHOW listen_addresses"));

      pg.createDatabaseIfMissing("tidemark_it");
      pg.createDatabaseIfMissing("tidemark_it");
      assertEquals("tidemark_it", scalar(pg, "tidemark_it", "SELECT current_database()"));
      assertThrows(IllegalArgumentException.class, () -> pg.createDatabaseIfMissing("Bad-Name"));
      assertTrue(postgresProcessesUsing(dataDir) > 0, "the postmaster should be visible while running");
    } finally {
      long c0 = System.nanoTime();
      pg.close();
      System.out.printf("PG close took %d ms%n", (System.nanoTime() - c0) / 1_000_000);
    }
    pg.close();

    assertEquals(0, postgresProcessesUsing(dataDir), "no postgres process may outlive close()");
    assertFalse(accepts(port), "the port must refuse connections after close()");
    assertFalse(dataDir.toFile().exists(), "a temporary data folder is deleted on close()");
  }

  @Test
  void persistentDataDirectoryKeepsDataAcrossRestarts(@TempDir Path dir) throws Exception {
    Path dataDir = dir.resolve("pgdata");
    try (EmbeddedPostgresServer first = EmbeddedPostgresServer.start(dataDir)) {
      execute(first, "CREATE TABLE tide(level int)");
      execute(first, "INSERT INTO tide VALUES (42)");
    }
    long t0 = System.nanoTime();
    try (EmbeddedPostgresServer second = EmbeddedPostgresServer.start(dataDir)) {
      System.out.printf("PG restart on existing data took %d ms%n", (System.nanoTime() - t0) / 1_000_000);
      assertEquals("42", scalar(second, "postgres", "SELECT level FROM tide"));
    }
    assertTrue(dataDir.resolve("PG_VERSION").toFile().exists(), "a persistent data folder is kept");
  }

  private static String scalar(EmbeddedPostgresServer pg, String db, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl(db), pg.user(), pg.password());
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      assertTrue(rs.next());
      return rs.getString(1);
    }
  }

  private static void execute(EmbeddedPostgresServer pg, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl("postgres"), pg.user(), pg.password());
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static long postgresProcessesUsing(Path dataDir) {
    String needle = dataDir.toString();
    return ProcessHandle.allProcesses()
        .filter(p -> p.info().commandLine().map(cl -> cl.contains(needle)).orElse(false))
        .count();
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
