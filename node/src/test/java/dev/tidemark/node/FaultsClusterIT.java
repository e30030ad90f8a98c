package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.changelog.ChangelogRecord;
import dev.tidemark.changelog.TopicReader;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.devstack.EmbeddedKafkaBroker;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Six {@code tidemark serve} processes on 127.0.0.1 in one cluster (two gateways, a query node, a
 * command node, the changelog node that publishes and a standby), against a PostgreSQL and a
 * Kafka broker of the test's own. Clients that retry commit uniquely keyed rows the whole time,
 * and read, while the test makes one fault after another: kill -9 of a gateway, of the query
 * node, of the command node and of the publishing changelog node; the broker stopped for 30 s;
 * PostgreSQL restarted. The changelog is stored in a database of its own (database.changelog-url)
 * on that server. Every row a client was told was committed is in the table once, in the
 * changelog once and on the topic once (as a consumer that drops repeated positions reads it),
 * and no decoded change was written into the served database.
 * Each fault's cost to the clients is printed as the table docs/reliability.md quotes.
 */
@ExtendWith(InfraExtension.class)
class FaultsClusterIT {

  static final String DB = "faults_cluster_it";
  static final String STORE = "faults_cluster_store_it";
  static final String NAME = "faults";
  static final int WRITERS = 3;
  static final Duration START = Duration.ofSeconds(120);
  /** Small heaps, one GC thread and C1 only: six JVMs start side by side on two cores. */
  static final List<String> JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
  /** How long the broker stays down: the fault itself. */
  static final Duration BROKER_OUTAGE = Duration.ofSeconds(30);

  /** One fault: when it was made, when every node was ready again, and what was seen meanwhile. */
  record Fault(String name, long startNanos, long readyNanos, String note) {}

  private final Queue<RetryingClient.Attempt> attempts = new ConcurrentLinkedQueue<>();
  private final Queue<RetryingClient.Call> calls = new ConcurrentLinkedQueue<>();
  private final Set<String> committed = ConcurrentHashMap.newKeySet();
  private final Queue<String> failures = new ConcurrentLinkedQueue<>();
  private final AtomicInteger replayed = new AtomicInteger();
  private final AtomicInteger reads = new AtomicInteger();
  private volatile boolean loading = true;

  @Test
  void noCommittedChangeIsLostOrMadeTwiceThroughSixFaults(SharedInfra shared, @TempDir Path brokerDir) throws Exception {
    long began = System.nanoTime();
    SharedInfra infra = SharedInfra.withOwnPostgres(shared);
    int[] brokerPorts = FreePorts.allocate(2);
    EmbeddedKafkaBroker[] broker = {null};
    List<ChildNode> nodes = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);
    List<Fault> faults = new ArrayList<>();
    try {
      ChangelogFixtures.prepare(infra, DB);
      infra.postgres().createDatabaseIfMissing(STORE);
      sql(infra, DB,
          "CREATE TABLE public.fault_row (id bigserial PRIMARY KEY, k text NOT NULL, writer int NOT NULL)",
          "GRANT SELECT, INSERT ON public.fault_row TO tidemark_writer",
          "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
          "SELECT tidemark.capture_schemas(ARRAY['public'])");
      broker[0] = ChangelogFixtures.startBroker(brokerDir, brokerPorts);
      String bootstrap = "127.0.0.1:" + brokerPorts[0];
      String cluster = TestNodes.clusterName();
      int[] clusterPorts = FreePorts.allocate(6);
      String members = Arrays.stream(clusterPorts).mapToObj(p -> "127.0.0.1:" + p).collect(Collectors.joining(","));
      String[][] layout = {{"gateway-a", "gateway"}, {"gateway-b", "gateway"}, {"query-1", "query"}, {"command-1", "command"},
          {"changelog-a", "changelog"}, {"changelog-b", "changelog"}};
      for (int i = 0; i < layout.length; i++) {
        Map<ConfigKey, String> v = TestNodes.config(infra, cluster, clusterPorts[i], members, layout[i][1]);
        v.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
        v.put(ConfigKey.DATABASE_NAME, NAME);
        v.put(ConfigKey.DATABASE_CHANGELOG_URL, infra.postgres().url(STORE));
        v.put(ConfigKey.KAFKA_BOOTSTRAP_SERVERS, bootstrap);
        nodes.add(new ChildNode(layout[i][0], v, JVM));
      }
      ChildNode gatewayA = nodes.get(0);
      ChildNode query = nodes.get(2);
      ChildNode command = nodes.get(3);
      ChildNode publisher = nodes.get(4);
      ChildNode standby = nodes.get(5);
      String topic = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_NAME, NAME)).kafka().topicFor(NAME);

      // five side by side, the standby once the publisher streams the slot, so that the one to kill is known
      nodes.subList(0, 5).forEach(ChildNode::start);
      nodes.subList(0, 5).forEach(n -> n.awaitReady(START));
      assertTrue(Await.until(() -> slotHolder(infra) != 0, Duration.ofSeconds(30)), "changelog-a streams the slot");
      standby.start().awaitReady(START);
      System.out.printf("[faults] six nodes ready after %.1f s%n", seconds(System.nanoTime() - began));

      List<String> gateways = List.of(nodes.get(0).mcpUrl(), nodes.get(1).mcpUrl());
      List<Future<?>> clients = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        clients.add(pool.submit(() -> write(gateways, writer)));
      }
      clients.add(pool.submit(() -> read(gateways)));
      awaitProgress("the load runs");

      faults.add(killAndRestart(gatewayA, nodes, "kill -9 a gateway (gateway-a), restarted"));
      faults.add(killAndRestart(query, nodes, "kill -9 the query node, restarted"));
      faults.add(killAndRestart(command, nodes, "kill -9 the command node, restarted"));

      long holder = slotHolder(infra);
      long published = topicEnd(bootstrap, topic);
      long killed = System.nanoTime();
      publisher.kill();
      assertTrue(Await.until(() -> slotHolder(infra) != 0 && slotHolder(infra) != holder, Duration.ofSeconds(60)), "the standby takes the slot over");
      long takenOver = System.nanoTime();
      assertTrue(Await.until(() -> topicEnd(bootstrap, topic) > published, Duration.ofSeconds(60)), "the standby publishes");
      long publishing = System.nanoTime();
      publisher.start().awaitReady(START);
      faults.add(new Fault("kill -9 the publishing changelog node (changelog-a), restarted as standby", killed, awaitAllReady(nodes),
          String.format("slot taken over in %.1f s, publishing again in %.1f s", seconds(takenOver - killed), seconds(publishing - killed))));
      awaitProgress("the load goes on after the relay takeover");

      long stopped = System.nanoTime();
      int committedBefore = committed.size();
      broker[0].close();
      broker[0] = null;
      assertTrue(Await.until(() -> !standby.ready(), Duration.ofSeconds(30)), "the publishing node is not ready while the broker is down");
      LockSupport.parkNanos(BROKER_OUTAGE.toNanos()); // the fault itself: the broker stays down this long
      int committedDuringOutage = committed.size() - committedBefore;
      broker[0] = ChangelogFixtures.startBroker(brokerDir, brokerPorts);
      long back = System.nanoTime();
      long[] before = {-1};
      assertTrue(Await.until(() -> (before[0] = topicEnd(bootstrap, topic)) >= 0, Duration.ofSeconds(30)), "the broker answers");
      assertTrue(Await.until(() -> topicEnd(bootstrap, topic) > before[0], Duration.ofSeconds(90)), "publishing resumes");
      long resumed = System.nanoTime();
      faults.add(new Fault("broker stopped for 30 s, started again", stopped, awaitAllReady(nodes),
          String.format("%d rows committed while it was down; publishing resumed %.1f s after the broker returned", committedDuringOutage,
              seconds(resumed - back))));
      awaitProgress("the load goes on after the broker outage");

      long restarting = System.nanoTime();
      infra.restartOwnPostgres();
      long restarted = System.nanoTime();
      faults.add(new Fault("PostgreSQL restarted (pg_ctl restart -m fast)", restarting, awaitAllReady(nodes),
          String.format("pg_ctl restart took %.1f s", seconds(restarted - restarting))));
      awaitProgress("the load goes on after PostgreSQL restarted");
      long end = System.nanoTime();

      loading = false;
      for (Future<?> c : clients) {
        c.get(3, TimeUnit.MINUTES);
      }
      System.out.println(report(faults, end));
      faults.clear();
      assertTrue(failures.isEmpty(), "no call failed for good: " + failures);

      TestDatabases.awaitDecoded(infra.postgres().jdbcUrl(DB), infra.postgres().jdbcUrl(STORE), infra.postgres().user(),
          infra.postgres().password(), Duration.ofSeconds(60));
      Map<String, Integer> rows = counts(infra, DB, "SELECT k, count(*) FROM public.fault_row GROUP BY k");
      assertEquals(committed, rows.keySet(), "every committed row is in the table, and no other");
      assertEquals(Map.of(), moreThanOnce(rows), "no row was inserted twice");
      assertEquals(0, TestDatabases.count(infra, DB, "SELECT count(*) FROM tidemark.changelog"), "nothing decoded is written back");
      Map<String, Integer> changelog = counts(infra, STORE, "SELECT c.after->>'k', count(*) FROM tidemark.changelog c"
          + " WHERE c.table_name = 'fault_row' AND c.op = 'INSERT' GROUP BY 1");
      assertEquals(committed, changelog.keySet(), "every committed row is in the changelog, and no other");
      assertEquals(Map.of(), moreThanOnce(changelog), "no row is in the changelog twice");
      try (TopicReader reader = new TopicReader(bootstrap, topic)) {
        try {
          reader.readUntil("every committed row on the topic", Duration.ofSeconds(90), () -> onTopic(reader).keySet().containsAll(committed));
        } catch (AssertionError e) {
          throw new AssertionError(e.getMessage() + "; " + missingFromTopic(infra, reader), e);
        }
        Map<String, Integer> records = onTopic(reader);
        assertEquals(committed, records.keySet(), "every committed row is on the topic, and no other");
        assertEquals(Map.of(), moreThanOnce(records), "a consumer that drops repeated positions reads each row once");
        System.out.printf("[faults] %d rows committed (%d replayed commits), %d reads; %d, %d and %d in table, changelog and topic;"
            + " %d repeated records dropped by position; %.0f s in all%n", committed.size(), replayed.get(), reads.get(), rows.size(),
            changelog.size(), records.size(), reader.duplicates, seconds(System.nanoTime() - began));
      }
    } finally {
      loading = false;
      if (!faults.isEmpty()) {
        System.out.println(report(faults, System.nanoTime())); // what was measured before the test failed
      }
      pool.shutdownNow();
      nodes.forEach(ChildNode::close);
      if (broker[0] != null) {
        broker[0].close();
      }
      infra.closeOwn();
    }
  }

  /** A writer: commits rows under keys of its own until the test ends, each sent again until it is committed. */
  private Void write(List<String> gateways, int writer) {
    try (RetryingClient client = new RetryingClient(gateways, writer, TestNodes.READ_WRITE_TOKEN, Duration.ofSeconds(120), attempts, calls)) {
      for (int n = 0; loading; n++) {
        String key = "fault-" + writer + "-" + n;
        JsonObject outcome = client.insertRow("fault_row", new JsonObject().put("k", key).put("writer", writer), key);
        if (outcome.getJsonObject("totals").getInteger("inserted") != 1) {
          failures.add(key + ": " + outcome.encode());
        }
        if (outcome.getBoolean("replayed", false)) {
          replayed.incrementAndGet();
        }
        committed.add(key);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the writer's think time
      }
    } catch (RuntimeException | AssertionError e) {
      failures.add("writer " + writer + ": " + e);
    }
    return null;
  }

  /** A reader of the newest row, which the query node serves. */
  private Void read(List<String> gateways) {
    try (RetryingClient client = new RetryingClient(gateways, 1, TestNodes.READ_ONLY_TOKEN, Duration.ofSeconds(120), attempts, calls)) {
      while (loading) {
        client.call("list_rows", new JsonObject().put("table", "fault_row").put("order", new JsonArray().add("-id")).put("limit", 1));
        reads.incrementAndGet();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the reader's think time
      }
    } catch (RuntimeException | AssertionError e) {
      failures.add("reader: " + e);
    }
    return null;
  }

  private Fault killAndRestart(ChildNode node, List<ChildNode> nodes, String name) {
    long killed = System.nanoTime();
    node.kill();
    node.start().awaitReady(START);
    Fault fault = new Fault(name, killed, awaitAllReady(nodes), "");
    awaitProgress("the load goes on after: " + name);
    return fault;
  }

  /** When every node answered ready. */
  private static long awaitAllReady(List<ChildNode> nodes) {
    nodes.forEach(n -> n.awaitReady(START));
    return System.nanoTime();
  }

  /** Waits until the writers committed 10 more rows and the reader read 5 more times: the cluster serves again. */
  private void awaitProgress(String what) {
    int rows = committed.size();
    int read = reads.get();
    assertTrue(Await.until(() -> committed.size() >= rows + 10 && reads.get() >= read + 5 || !failures.isEmpty(), START),
        () -> what + ": " + failures);
    assertTrue(failures.isEmpty(), () -> what + ": " + failures);
  }

  /** The walsender's pid of the process streaming the slot; 0 when none does. */
  private static long slotHolder(SharedInfra infra) {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet rs = c.createStatement().executeQuery(
        "SELECT coalesce(max(active_pid), 0) FROM pg_replication_slots WHERE database = current_database()")) {
      rs.next();
      return rs.getLong(1);
    } catch (Exception e) {
      return 0;
    }
  }

  /** The topic's end offset (one partition); -1 while the broker does not answer. */
  private static long topicEnd(String bootstrap, String topic) {
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000,
        ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
        ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
      TopicPartition tp = new TopicPartition(topic, 0);
      return consumer.endOffsets(List.of(tp), Duration.ofSeconds(3)).get(tp);
    } catch (RuntimeException e) {
      return -1;
    }
  }

  private static Map<String, Integer> onTopic(TopicReader reader) {
    Map<String, Integer> out = new HashMap<>();
    for (ChangelogRecord r : reader.of("fault_row")) {
      out.merge(r.body().getJsonObject("after").getString("k"), 1, Integer::sum);
    }
    return out;
  }

  /** What the topic lacks, where the changelog has it, and what the relay stored as published. */
  private String missingFromTopic(SharedInfra infra, TopicReader reader) {
    Set<String> missing = new java.util.TreeSet<>(committed);
    missing.removeAll(onTopic(reader).keySet());
    Set<String> inDropped = new java.util.TreeSet<>();
    for (ChangelogRecord r : reader.dropped) {
      JsonObject after = r.body().getJsonObject("after");
      if (after != null && missing.contains(after.getString("k"))) {
        inDropped.add(after.getString("k") + "@" + r.position());
      }
    }
    StringBuilder out = new StringBuilder(missing.size() + " rows missing, " + reader.records.size() + " records taken, "
        + reader.dropped.size() + " dropped as repeated (of them missing rows: " + inDropped + "); ");
    try (Connection c = ChangelogFixtures.jdbc(infra, STORE); var st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("SELECT k.position, c.id, c.after->>'k' FROM tidemark.changelog c"
          + " JOIN tidemark.changelog_commit k ON k.xid = c.xid WHERE c.table_name = 'fault_row' ORDER BY 1, 2")) {
        while (rs.next()) {
          if (missing.contains(rs.getString(3))) {
            out.append(rs.getString(3)).append(" at ").append(rs.getLong(1)).append('/').append(rs.getLong(2)).append(", ");
          }
        }
      }
      try (ResultSet rs = st.executeQuery("SELECT json_build_object('published_commit', published_commit, 'published_change', published_change,"
          + " 'decoded_lsn', decoded_lsn)::text FROM tidemark.changelog_state")) {
        rs.next();
        out.append("state ").append(rs.getString(1));
      }
    } catch (Exception e) {
      out.append(e);
    }
    ChangelogRecord last = reader.records.isEmpty() ? null : reader.records.get(reader.records.size() - 1);
    return out.append("; last taken ").append(last == null ? "none" : last.position()).toString();
  }

  private static Map<String, Integer> counts(SharedInfra infra, String db, String sql) throws Exception {
    Map<String, Integer> out = new HashMap<>();
    try (Connection c = ChangelogFixtures.jdbc(infra, db); ResultSet rs = c.createStatement().executeQuery(sql)) {
      while (rs.next()) {
        out.put(rs.getString(1), rs.getInt(2));
      }
    }
    return out;
  }

  private static Map<String, Integer> moreThanOnce(Map<String, Integer> counts) {
    return counts.entrySet().stream().filter(e -> e.getValue() != 1).collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));
  }

  /**
   * One row per fault, over the attempts made from the fault until the next one: how long calls
   * failed (first failed attempt to the end of the last), how many attempts failed and why, how
   * many calls were sent again, the most retries one call needed, the longest call, and the time
   * until every node was ready again.
   */
  private String report(List<Fault> faults, long end) {
    StringBuilder out = new StringBuilder("[faults] load average " + loadAverage() + "\n"
        + "| fault | calls failed for | failed attempts (why) | calls retried | most retries of one call | longest call | all nodes ready after | notes |\n"
        + "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < faults.size(); i++) {
      Fault f = faults.get(i);
      long from = f.startNanos();
      long to = i + 1 < faults.size() ? faults.get(i + 1).startNanos() : end;
      List<RetryingClient.Attempt> failed = attempts.stream()
          .filter(a -> a.failure() != null && a.endNanos() >= from && a.endNanos() < to).toList();
      List<RetryingClient.Call> window = calls.stream().filter(c -> c.endNanos() >= from && c.endNanos() < to).toList();
      long span = failed.isEmpty() ? 0
          : failed.stream().mapToLong(RetryingClient.Attempt::endNanos).max().getAsLong()
              - failed.stream().mapToLong(RetryingClient.Attempt::startNanos).min().getAsLong();
      Map<String, Long> why = new TreeMap<>(failed.stream().collect(Collectors.groupingBy(
          a -> a.tool() + " " + a.failure(), Collectors.counting())));
      out.append(String.format("| %s | %.1f s | %d%s | %d of %d | %d | %.1f s | %.1f s | %s |%n", f.name(), seconds(span), failed.size(),
          why.isEmpty() ? "" : " (" + why.entrySet().stream().map(e -> e.getValue() + " " + e.getKey()).collect(Collectors.joining(", ")) + ")",
          window.stream().filter(c -> c.retries() > 0).count(), window.size(),
          window.stream().mapToInt(RetryingClient.Call::retries).max().orElse(0),
          seconds(window.stream().mapToLong(c -> c.endNanos() - c.startNanos()).max().orElse(0)),
          seconds(f.readyNanos() - f.startNanos()), f.note()));
    }
    return out.toString();
  }

  private static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return String.valueOf(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }
}
