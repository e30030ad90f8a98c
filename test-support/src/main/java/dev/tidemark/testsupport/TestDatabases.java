package dev.tidemark.testsupport;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Plain-SQL access to a database of the shared PostgreSQL as its superuser, for fixtures and for checking what a test's calls left behind. */
public final class TestDatabases {

  private TestDatabases() {}

  public static Connection jdbc(SharedInfra infra, String db) {
    try {
      return DriverManager.getConnection(infra.postgres().jdbcUrl(db), infra.postgres().user(), infra.postgres().password());
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of every row {@code sql} returns, as text. */
  public static List<String> strings(SharedInfra infra, String db, String sql) {
    List<String> out = new ArrayList<>();
    try (Connection c = jdbc(infra, db); var r = c.createStatement().executeQuery(sql)) {
      while (r.next()) {
        out.add(r.getString(1));
      }
      return out;
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The first column of the first row {@code sql} returns, as a number. */
  public static long count(SharedInfra infra, String db, String sql) {
    try (Connection c = jdbc(infra, db); var r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Statements running now (in any database of the server) whose text holds {@code fragment}, this one left out. */
  public static long running(SharedInfra infra, String db, String fragment) {
    try (Connection c = jdbc(infra, db); var ps = c.prepareStatement(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND strpos(query, ?) > 0 AND pid <> pg_backend_pid()")) {
      ps.setString(1, fragment);
      try (var r = ps.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Runs {@code statements} in order, each in its own transaction. */
  public static void sql(SharedInfra infra, String db, String... statements) {
    try (Connection c = jdbc(infra, db); var st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Waits until the relay of database {@code db} has decoded and stored every change committed so
   * far: capture reads the WAL, so it lags the commit. A fence (a non-transactional logical
   * message) marks "now", and the relay stores its progress past it.
   */
  public static void awaitDecoded(SharedInfra infra, String db) {
    awaitDecoded(infra.postgres().jdbcUrl(db), infra.postgres().user(), infra.postgres().password());
  }

  /** The same, for a backlog that takes longer than a minute to decode on a busy machine. */
  public static void awaitDecoded(SharedInfra infra, String db, Duration timeout) {
    awaitDecoded(infra.postgres().jdbcUrl(db), infra.postgres().user(), infra.postgres().password(), timeout);
  }

  /** Waits until the relay of the database at {@code jdbcUrl} has decoded everything written before this call. */
  public static void awaitDecoded(String jdbcUrl, String user, String password) {
    awaitDecoded(jdbcUrl, user, password, Duration.ofSeconds(60));
  }

  private static void awaitDecoded(String jdbcUrl, String user, String password, Duration timeout) {
    awaitDecoded(jdbcUrl, jdbcUrl, user, password, timeout);
  }

  /** The same, for a relay that stores the changelog in the database at {@code storeJdbcUrl} (database.changelog-url). */
  public static void awaitDecoded(String jdbcUrl, String storeJdbcUrl, String user, String password, Duration timeout) {
    long fence;
    try (Connection c = DriverManager.getConnection(jdbcUrl, user, password); var st = c.createStatement();
        var rs = st.executeQuery("SELECT (pg_logical_emit_message(false, 'tidemark.fence', '', true) - '0/0')::bigint")) {
      rs.next();
      fence = rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    Await.that("the relay to decode through " + fence, timeout, () -> {
      try (Connection c = DriverManager.getConnection(storeJdbcUrl, user, password); var st = c.createStatement();
          var rs = st.executeQuery("SELECT decoded_lsn >= " + fence + " FROM tidemark.changelog_state")) {
        return rs.next() && rs.getBoolean(1);
      } catch (SQLException e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** The live keys of database {@code db}'s key ring, for tests that make cursors or plan ids of their own. */
  public static dev.tidemark.keys.KeyRing keyRing(SharedInfra infra, String db) {
    try (Connection c = jdbc(infra, db); var rs = c.createStatement().executeQuery(
        "SELECT id, secret FROM tidemark.key_ring WHERE retires_at IS NULL OR retires_at > now()")) {
      List<dev.tidemark.keys.KeyRing.Key> keys = new ArrayList<>();
      while (rs.next()) {
        keys.add(new dev.tidemark.keys.KeyRing.Key(rs.getInt(1), rs.getBytes(2), 0, Long.MAX_VALUE));
      }
      return new dev.tidemark.keys.KeyRing(keys);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
