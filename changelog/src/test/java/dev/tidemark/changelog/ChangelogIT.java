package dev.tidemark.changelog;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.ChangePosition;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Capture and the relay against a real PostgreSQL and Kafka: what is captured, in which order it
 * reaches the topic, and that a relay stopped mid-stream loses and doubles nothing. The relay runs
 * on the harness, which tests close and start again; changes_since, which reads what it stores, is
 * tested in the query module.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChangelogIT {

  static final String DB = "changelog_it";
  static final String NAME = "clit";
  static final Duration WAIT = Duration.ofSeconds(60);

  private SharedInfra infra;
  private ServiceHarness relay;
  private String topic;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ServiceHarness.prepareDatabase(infra, DB,
        "CREATE TABLE IF NOT EXISTS public.z (id int PRIMARY KEY, v int NOT NULL)",
        "CREATE TABLE IF NOT EXISTS public.writes (writer int, seq int, PRIMARY KEY (writer, seq))",
        "CREATE TABLE IF NOT EXISTS public.no_pk (a int, b text)",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.z, public.writes TO tidemark_writer");
    relay = startRelay(Map.of());
    topic = ChangelogRole.topic(infra, NAME);
  }

  @AfterAll
  void stop() {
    ServiceHarness.closeAll(relay);
  }

  private ServiceHarness startRelay(Map<ConfigKey, String> overrides) {
    return ChangelogRole.start(infra, DB, NAME, overrides);
  }

  @Test
  @Order(1)
  void aChangeMadeWithPlainSqlIsCapturedWithKeyAndImagesAndNoSettingCanClaimWhoMadeIt() throws Exception {
    try (Connection c = TestDatabases.jdbc(infra, DB)) {
      c.setAutoCommit(false);
      // settings a caller's SQL can make are not attribution: only Tidemark's signed record is
      c.createStatement().execute("SELECT set_config('tidemark.caller', 'alice', true), set_config('tidemark.tool', 'insert_rows', true)");
      c.createStatement().execute("SET LOCAL ROLE tidemark_writer");
      c.createStatement().execute("INSERT INTO public.z VALUES (100, 1)");
      c.createStatement().execute("UPDATE public.z SET v = 2 WHERE id = 100");
      // without the server's MAC over this transaction, it cannot read back what it captured
      java.sql.Savepoint before = c.setSavepoint();
      java.sql.SQLException refused = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
          () -> c.createStatement().executeQuery("SELECT * FROM tidemark.changes_of_current_transaction(repeat('0', 64))"));
      assertEquals("42501", refused.getSQLState());
      c.rollback(before);
      c.commit();
    }
    sql(infra, DB, "INSERT INTO public.no_pk VALUES (1, 'x')", "TRUNCATE public.no_pk");
    TestDatabases.awaitDecoded(infra, DB);
    try (Connection c = TestDatabases.jdbc(infra, DB);
        ResultSet r = c.createStatement().executeQuery("SELECT c.table_name, c.op, c.key::text, c.before::text, a.caller, a.tool "
            + "FROM tidemark.changelog c JOIN tidemark.changelog_commit k ON k.xid = c.xid "
            + "LEFT JOIN tidemark.change_attribution a ON a.xid = c.xid "
            + "WHERE c.table_name IN ('z', 'no_pk') AND c.op <> 'DDL' ORDER BY k.position DESC, c.id DESC LIMIT 4")) {
      List<String> rows = new ArrayList<>();
      while (r.next()) {
        rows.add(r.getString(1) + " " + r.getString(2) + " " + r.getString(3) + " " + r.getString(4) + " " + r.getString(5) + " " + r.getString(6));
      }
      assertEquals(List.of(
          "no_pk TRUNCATE null null null null",
          "no_pk INSERT {\"a\": 1, \"b\": \"x\"} null null null",
          "z UPDATE [100] {\"v\": 1, \"id\": 100} null null",
          "z INSERT [100] null null null"), rows);
    }
  }

  @Test
  @Order(2)
  void aTableCreatedAfterStartIsCapturedWithoutARestart() {
    sql(infra, DB, "DROP TABLE IF EXISTS public.late", "CREATE TABLE public.late (id int PRIMARY KEY)", "INSERT INTO public.late VALUES (7)");
    try (TopicReader reader = new TopicReader(infra, topic)) {
      reader.readUntil("the insert into the new table", WAIT,
          () -> reader.of("late").stream().anyMatch(r -> "INSERT".equals(r.op())));
      ChangelogRecord insert = reader.of("late").stream().filter(r -> "INSERT".equals(r.op())).findFirst().orElseThrow();
      assertEquals(new JsonArray().add(7), insert.body().getJsonArray("key"));
      assertTrue(reader.of("late").stream().anyMatch(ChangelogRecord::isDdl), "the CREATE TABLE is in the changelog too");
    }
  }

  @Test
  @Order(3)
  void aLateCommitWithAnEarlierIdIsPublishedAfterTheEarlyOneAndNotSkipped() throws Exception {
    sql(infra, DB, "INSERT INTO public.z VALUES (200, 0), (201, 0) ON CONFLICT DO NOTHING");
    try (Connection t1 = TestDatabases.jdbc(infra, DB); Connection t2 = TestDatabases.jdbc(infra, DB);
        TopicReader reader = new TopicReader(infra, topic)) {
      t1.setAutoCommit(false);
      t2.setAutoCommit(false);
      t1.createStatement().execute("UPDATE public.z SET v = 1 WHERE id = 200");  // takes the lower changelog id
      t2.createStatement().execute("UPDATE public.z SET v = 1 WHERE id = 201");
      t2.commit();
      // T2 is published while T1 is still open: an open transaction does not hold the relay back
      reader.readUntil("T2's change", WAIT, () -> reader.of("z").stream().anyMatch(r -> key(r) == 201 && v(r) == 1));
      t1.commit();
      reader.readUntil("T1's change", WAIT, () -> reader.of("z").stream().anyMatch(r -> key(r) == 200 && v(r) == 1));
      List<Integer> order = reader.of("z").stream().filter(r -> v(r) == 1 && (key(r) == 200 || key(r) == 201)).map(ChangelogIT::key).toList();
      assertEquals(List.of(201, 200), order, "commit order, although T1 captured first");
    }
  }

  @Test
  @Order(4)
  void aTransactionWithTheOlderIdThatCommitsLastIsSeenAfterTheNewerOne() throws Exception {
    sql(infra, DB, "INSERT INTO public.z VALUES (300, 0) ON CONFLICT DO NOTHING");
    try (Connection t1 = TestDatabases.jdbc(infra, DB); Connection t2 = TestDatabases.jdbc(infra, DB);
        TopicReader reader = new TopicReader(infra, topic)) {
      t1.setAutoCommit(false);
      t2.setAutoCommit(false);
      long xid1 = xid(t1);  // T1 takes its transaction id first
      t2.createStatement().execute("UPDATE public.z SET v = 2 WHERE id = 300");
      long xid2 = xid(t2);
      t2.commit();
      t1.createStatement().execute("UPDATE public.z SET v = 1 WHERE id = 300");
      t1.commit();
      assertTrue(xid1 < xid2, "the test only means something when T1's id is the older one");
      reader.readUntil("both changes to Z", WAIT, () -> reader.of("z").stream().filter(r -> key(r) == 300 && v(r) > 0).count() == 2);
      List<Integer> values = reader.of("z").stream().filter(r -> key(r) == 300 && v(r) > 0).map(ChangelogIT::v).toList();
      assertEquals(List.of(2, 1), values, "T2's change to Z comes before T1's, as they committed");
      List<String> xids = reader.of("z").stream().filter(r -> key(r) == 300 && v(r) > 0)
          .map(r -> r.body().getString("transaction")).toList();
      assertEquals(List.of(String.valueOf(xid2), String.valueOf(xid1)), xids);
    }
  }

  @Test
  @Order(5)
  void tenThousandChangesFromEightWritersSurviveTwoRelayRestartsInCommitOrderEachPositionOnce() throws Exception {
    sql(infra, DB, "TRUNCATE public.writes");
    int writers = 8;
    int perWriter = 1250;
    AtomicInteger committed = new AtomicInteger();
    CountDownLatch[] milestones = {new CountDownLatch(2000), new CountDownLatch(4000), new CountDownLatch(6000), new CountDownLatch(8000)};
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    long started = System.nanoTime();
    List<Future<?>> done = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      int writer = w;
      done.add(pool.submit(() -> {
        try (Connection c = TestDatabases.jdbc(infra, DB); var ps = c.prepareStatement("INSERT INTO public.writes VALUES (?, ?)")) {
          for (int seq = 0; seq < perWriter; seq++) {
            ps.setInt(1, writer);
            ps.setInt(2, seq);
            ps.executeUpdate();
            committed.incrementAndGet();
            for (CountDownLatch m : milestones) {
              m.countDown();
            }
          }
        }
        return null;
      }));
    }
    try {
      assertTrue(milestones[0].await(60, TimeUnit.SECONDS));
      relay.close();  // stopped mid-stream, perhaps mid-batch
      relay = null;
      assertTrue(milestones[1].await(60, TimeUnit.SECONDS));
      // small batches, most of them cut short by their images' bytes rather than their count
      relay = startRelay(Map.of(ConfigKey.CHANGELOG_RELAY_BATCH_SIZE, "300", ConfigKey.CHANGELOG_RELAY_BATCH_BYTES, "2000"));
      assertTrue(milestones[2].await(60, TimeUnit.SECONDS));
      relay.close();
      relay = null;
      assertTrue(milestones[3].await(60, TimeUnit.SECONDS));
      relay = startRelay(Map.of());
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(writers * perWriter, committed.get());
    TestDatabases.awaitDecoded(infra, DB);

    List<ChangePosition> expected = new ArrayList<>();
    try (Connection c = TestDatabases.jdbc(infra, DB);
        ResultSet r = c.createStatement().executeQuery("SELECT k.position, c.id FROM tidemark.changelog c "
            + "JOIN tidemark.changelog_commit k ON k.xid = c.xid WHERE c.table_name = 'writes' AND c.op = 'INSERT' "
            + "AND (c.after->>'seq')::int >= 0 ORDER BY k.position, c.id")) {
      while (r.next()) {
        expected.add(new ChangePosition(r.getLong(1), r.getLong(2)));
      }
    }
    assertEquals(writers * perWriter, expected.size(), "every change was captured");
    try (TopicReader reader = new TopicReader(infra, topic)) {
      reader.readUntil("all 10,000 changes on the topic", Duration.ofSeconds(120),
          () -> reader.of("writes").stream().filter(r -> "INSERT".equals(r.op())).count() >= expected.size());
      long millis = (System.nanoTime() - started) / 1_000_000;
      List<ChangelogRecord> inserts = reader.of("writes").stream().filter(r -> "INSERT".equals(r.op())).toList();
      List<ChangePosition> published = inserts.stream().map(ChangelogRecord::position).toList();
      assertEquals(expected, published, "the topic holds every change, in commit order");
      int[] next = new int[writers];
      for (ChangelogRecord r : inserts) {
        JsonObject after = r.body().getJsonObject("after");
        assertEquals(next[after.getInteger("writer")]++, after.getInteger("seq"), "each writer's commits in its order");
      }
      System.out.printf("[relay-kill] %d changes, %d writers, 2 relay stops; %d duplicates dropped; %d ms from first write to all read%n",
          inserts.size(), writers, reader.duplicates, millis);
    }
  }

  private static long xid(Connection c) throws Exception {
    try (ResultSet r = c.createStatement().executeQuery("SELECT pg_current_xact_id()::text::bigint")) {
      r.next();
      return r.getLong(1);
    }
  }

  private static int key(ChangelogRecord r) {
    JsonArray key = r.body().getJsonArray("key");
    return key == null ? -1 : key.getInteger(0);
  }

  private static int v(ChangelogRecord r) {
    JsonObject after = r.body().getJsonObject("after");
    return after == null ? -1 : after.getInteger("v", -1);
  }
}
