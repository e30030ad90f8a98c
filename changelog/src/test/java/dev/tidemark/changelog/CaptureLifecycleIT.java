package dev.tidemark.changelog;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.database.Pools;
import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Vertx;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The capture's own parts over their life: a bulk transaction, a server login that lacks what
 * decoding needs, and the uninstall that leaves the database as it was. A lost slot, which
 * callers see as CURSOR_EXPIRED, is tested with changes_since in the query module.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CaptureLifecycleIT {

  static final String DB = "capture_lifecycle_it";
  static final String NAME = "lifecycle";

  private SharedInfra infra;
  private ServiceHarness relay;

  @BeforeAll
  void start(SharedInfra shared) {
    // a server of its own: the million-row update's WAL would otherwise hold every other test's slot back
    this.infra = SharedInfra.withOwnPostgres(shared);
    ServiceHarness.prepareDatabase(infra, DB);
    sql(infra, DB, "CREATE TABLE IF NOT EXISTS public.l (id int PRIMARY KEY, v int NOT NULL)",
        "INSERT INTO public.l VALUES (1, 1) ON CONFLICT DO NOTHING");
    relay = startRelay(Map.of());
  }

  @AfterAll
  void stop() {
    if (relay != null) {
      relay.close();
    }
    infra.closeOwn();
  }

  private ServiceHarness startRelay(Map<ConfigKey, String> overrides) {
    return ChangelogRole.start(infra, DB, NAME, overrides);
  }

  private long count(String sql) throws Exception {
    try (Connection c = TestDatabases.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    }
  }

  @Test
  @Order(1)
  void aMillionRowUpdateInOneTransactionIsStoredInBoundedBatches() throws Exception {
    // filled outside the served schemas, so that only the update is decoded
    sql(infra, DB, "CREATE SCHEMA IF NOT EXISTS staging", "DROP TABLE IF EXISTS staging.big, public.big",
        "CREATE TABLE staging.big (id int PRIMARY KEY, n int NOT NULL, pad text NOT NULL)",
        "INSERT INTO staging.big SELECT g, 0, repeat('x', 100) FROM generate_series(1, 1000000) g",
        "ALTER TABLE staging.big SET SCHEMA public");
    Await.that("public.big in the publication", Duration.ofSeconds(60), () -> {
      try {
        return count("SELECT count(*) FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid"
            + " WHERE c.relname = 'big' AND t.published") == 1;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    sql(infra, DB, "UPDATE public.big SET n = 1");
    // a million changes decoded, stored and published side by side on two cores, beside another test JVM
    TestDatabases.awaitDecoded(infra, DB, Duration.ofMinutes(4));
    assertEquals(1_000_000, count("SELECT count(*) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'"
        + " AND (before->>'n')::int = 0 AND (after->>'n')::int = 1 AND after->>'pad' = repeat('x', 100)"));
    assertEquals(1, count("SELECT count(DISTINCT xid) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'"), "one transaction");
    // the reader held at most 1,000 decoded changes (SlotReader.STORE_BATCH): it stored them in that many transactions of its own
    long stores = count("SELECT count(DISTINCT xmin::text) FROM tidemark.changelog WHERE table_name = 'big' AND op = 'UPDATE'");
    assertTrue(stores >= 1_000, "stored in " + stores + " transactions");
    sql(infra, DB, "DROP TABLE public.big");
  }

  @Test
  @Order(2)
  void aLoginWithoutTheReplicationRightStopsTheRelayAtStartNamingIt() {
    sql(infra, DB, "DROP ROLE IF EXISTS lifecycle_norepl", "CREATE ROLE lifecycle_norepl LOGIN PASSWORD 'pw' NOREPLICATION");
    Throwable failed = assertThrows(Throwable.class, () -> startRelay(Map.of(
        ConfigKey.DATABASE_USER, "lifecycle_norepl", ConfigKey.DATABASE_PASSWORD, "pw")));
    Throwable root = failed;
    while (root.getCause() != null && !(root instanceof IllegalStateException)) {
      root = root.getCause();
    }
    assertTrue(root.getMessage().contains("lifecycle_norepl has neither REPLICATION nor superuser")
        && root.getMessage().contains("ALTER ROLE lifecycle_norepl REPLICATION"), root.getMessage());
  }

  @Test
  @Order(3)
  void uninstallRemovesSlotPublicationTriggersAndSchemaAndPutsBackTheReplicaIdentity() throws Exception {
    assertEquals("f", identity("l"));
    relay.close();
    relay = null;
    Vertx vertx = Vertx.vertx();
    try {
      Map<ConfigKey, String> v = ServiceHarness.config(infra, "changelog");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
      var pool = Pools.create(vertx, TidemarkConfig.from(v).database());
      CaptureSetup.uninstall(pool).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertUninstalled();
      // and it can be installed again
      DatabaseSetup.prepare(pool, ServiceHarness.CALLER_PASSWORDS, false).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    assertEquals(1, count("SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"), "installed again");
  }

  @Test
  @Order(4)
  void aLoginWithCreateCreateroleAndReplicationAloneInstallsNamesTablesItDoesNotOwnAndUninstallsOnlyWhatItCan() throws Exception {
    String db = "capture_owner_it";
    String login = "lifecycle_owner";
    sql(infra, DB, "DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
        "DROP ROLE IF EXISTS " + login, "CREATE ROLE " + login + " LOGIN PASSWORD 'pw' CREATEROLE REPLICATION",
        "GRANT CREATE ON DATABASE " + db + " TO " + login,
        // the caller roles exist already, made by another install on this server: a CREATEROLE login needs their admin option
        "GRANT tidemark_reader, tidemark_writer TO " + login + " WITH ADMIN OPTION");
    sql(infra, db, "GRANT CREATE ON SCHEMA public TO " + login,
        // someone else's table, with a key and no replica identity, on which the login may create triggers
        "CREATE TABLE public.theirs (id int PRIMARY KEY)", "ALTER TABLE public.theirs REPLICA IDENTITY NOTHING",
        "GRANT SELECT, TRIGGER ON public.theirs TO " + login);
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(db), login, "pw")) {
      c.createStatement().execute("CREATE TABLE public.mine (id int PRIMARY KEY, v text)");
    }
    Vertx vertx = Vertx.vertx();
    try {
      Map<ConfigKey, String> v = ServiceHarness.config(infra, "changelog");
      v.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
      v.put(ConfigKey.DATABASE_USER, login);
      v.put(ConfigKey.DATABASE_PASSWORD, "pw");
      var pool = Pools.create(vertx, TidemarkConfig.from(v).database());
      DatabaseSetup.prepare(pool, ServiceHarness.CALLER_PASSWORDS, false).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
      pool.query("SELECT tidemark.capture_schemas(ARRAY['public'])").execute().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);

      assertEquals("true|null", TestDatabases.strings(infra, db, "SELECT t.published || '|' || coalesce(t.problem, 'null')"
          + " FROM tidemark.captured_table t WHERE t.relid = 'public.mine'::regclass").get(0));
      String theirs = TestDatabases.strings(infra, db, "SELECT t.published || '|' || t.problem FROM tidemark.captured_table t"
          + " WHERE t.relid = 'public.theirs'::regclass").get(0);
      assertTrue(theirs.startsWith("false|not published: the login does not own the table")
          && theirs.contains("ALTER PUBLICATION tidemark_changes ADD TABLE public.theirs"), theirs);
      assertEquals("n", identityIn(db, "theirs"), "a table the login does not own is left as it was");
      // the caller role's password was sent as a verifier, and logs in
      assertEquals(1, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_authid WHERE rolname = 'tidemark_writer'"
          + " AND rolpassword LIKE 'SCRAM-SHA-256$%'"));
      try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(db), "tidemark_writer",
          ServiceHarness.CALLER_PASSWORDS.get("tidemark_writer"))) {
        assertTrue(c.isValid(5));
      }

      // the login made a plan trigger on someone else's table, which only the owner may drop: nothing is removed
      Throwable refused = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> CaptureSetup.uninstall(pool).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS)).getCause();
      assertTrue(refused.getMessage().contains("tables this login does not own: public.theirs"), refused.getMessage());
      assertEquals(1, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
      assertEquals(1, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));

      // once the owner took the trigger off, the login removes the rest, and leaves the table it never changed alone
      sql(infra, db, "DROP TRIGGER tidemark_capture ON public.theirs", "DROP TRIGGER tidemark_capture_truncate ON public.theirs");
      CaptureSetup.uninstall(pool).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(0, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
      assertEquals(0, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));
      assertEquals(0, TestDatabases.count(infra, db, "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tidemark%'"));
      assertEquals("d", identityIn(db, "mine"), "the replica identity the login's own table had");
      assertEquals("n", identityIn(db, "theirs"));
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private String identityIn(String db, String table) {
    return TestDatabases.strings(infra, db, "SELECT relreplident::text FROM pg_class WHERE oid = 'public." + table + "'::regclass").get(0);
  }

  private void assertUninstalled() throws Exception {
    assertEquals(0, count("SELECT count(*) FROM pg_replication_slots WHERE database = current_database()"));
    assertEquals(0, count("SELECT count(*) FROM pg_publication"));
    assertEquals(0, count("SELECT count(*) FROM pg_namespace WHERE nspname = 'tidemark'"));
    assertEquals(0, count("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'tidemark%'"));
    assertEquals(0, count("SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'tidemark%'"));
    assertEquals("d", identity("l"), "the replica identity the table had");
    assertEquals(1, count("SELECT count(*) FROM public.l"), "the served data stays");
  }

  private String identity(String table) throws Exception {
    try (Connection c = TestDatabases.jdbc(infra, DB);
        ResultSet r = c.createStatement().executeQuery("SELECT relreplident::text FROM pg_class WHERE oid = 'public." + table + "'::regclass")) {
      r.next();
      return r.getString(1);
    }
  }
}
