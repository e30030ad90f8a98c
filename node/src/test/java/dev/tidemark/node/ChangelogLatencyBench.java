package dev.tidemark.node;

import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpMethod;
import static dev.tidemark.node.ChangelogFixtures.sql;

import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.ChangeNotice;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SseStream;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.sql.Connection;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Not a test (its name matches no test pattern; bench/changelog-latency.sh runs it): measures
 * commit-to-local-bus latency on two gateway nodes at a steady rate, commit-to-notification
 * latency for an MCP client subscribed on node B, and relay throughput.
 */
@ExtendWith(InfraExtension.class)
class ChangelogLatencyBench {

  static final String DB = "bench_cl";
  static final String NAME = "bench";
  static final int WARMUP_IDS = 10_000_000;

  @Test
  void measure(SharedInfra infra) throws Exception {
    int rate = Integer.getInteger("bench.rate", 500);
    int seconds = Integer.getInteger("bench.seconds", 10);
    int burst = Integer.getInteger("bench.burst", 20_000);
    int warmup = Integer.getInteger("bench.warmup", 5);
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.bench", "CREATE TABLE public.bench (id int PRIMARY KEY, v int)",
        "GRANT SELECT ON public.bench TO tidemark_reader");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    TidemarkNode a = TestNodes.start(ChangelogFixtures.config(infra, DB, NAME, cluster, ports[0], members, "gateway,changelog"));
    // node B also runs the query role, which a subscription needs to check that the table is readable
    TidemarkNode b = TestNodes.start(ChangelogFixtures.config(infra, DB, NAME, cluster, ports[1], members, "gateway,query"));
    try {
      int n = rate * seconds;
      long[] committed = new long[n + burst];
      long[] arrivedA = new long[n];
      long[] arrivedB = new long[n];
      long[] onTopic = new long[n];
      CountDownLatch steady = new CountDownLatch(2 * n);
      CountDownLatch all = new CountDownLatch(burst);
      long[] burstDone = new long[1];
      Map<Integer, Boolean> seenB = new ConcurrentHashMap<>();
      a.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> {
        int id = ((JsonArray) ChangeNotice.fromJson(m.body()).key()).getInteger(0);
        if (id < n) {
          arrivedA[id] = System.nanoTime();
          steady.countDown();
        }
      }).completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      b.vertx().eventBus().<JsonObject>localConsumer(Addresses.changes(NAME), m -> {
        int id = ((JsonArray) ChangeNotice.fromJson(m.body()).key()).getInteger(0);
        if (id >= WARMUP_IDS) {
          return;  // warm-up changes are not measured
        }
        if (id < n) {
          arrivedB[id] = System.nanoTime();
          steady.countDown();
        } else if (seenB.putIfAbsent(id, true) == null) {
          all.countDown();
          if (all.getCount() == 0) {
            burstDone[0] = System.nanoTime();
          }
        }
      }).completion().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);

      // a plain consumer of the topic that waits at most 5 ms per fetch: commit -> topic, without the fan-out
      String topic = a.config().kafka().topicFor(NAME);
      CountDownLatch positioned = new CountDownLatch(1);
      Thread topicReader = new Thread(() -> readTopic(infra, topic, onTopic, n, positioned), "bench-topic-reader");
      topicReader.setDaemon(true);
      topicReader.start();
      if (!positioned.await(30, TimeUnit.SECONDS)) {
        throw new AssertionError("the topic reader did not start");
      }
      // an MCP client on node B: a 2025-11-25 session subscribed to the table, its GET stream open.
      // Notifications carry no data and a gateway sends at most one per resource per 20 ms, so a
      // change's latency is the time from its commit to the first notification that arrives after
      // it: the client's next read, which that notification prompts, sees the change.
      long[] notified = new long[1 << 20];
      McpHttpClient subscriber = new McpHttpClient(TestNodes.mcpUrl(b), TestNodes.READ_ONLY_TOKEN);
      subscriber.initialize();
      subscriber.rpc("resources/subscribe", new JsonObject().put("uri", "tidemark://table/public.bench"));
      SseStream stream = SseStream.open(HttpMethod.GET, TestNodes.mcpUrl(b), MultiMap.caseInsensitiveMultiMap()
          .add("Authorization", "Bearer " + TestNodes.READ_ONLY_TOKEN).add("Accept", "text/event-stream")
          .add("Mcp-Session-Id", subscriber.sessionId()).add("MCP-Protocol-Version", "2025-11-25"), null);
      int[] notifiedCount = new int[1];
      Thread notificationReader = new Thread(() -> {
        try {
          while (notifiedCount[0] < notified.length && stream.await("notifications/resources/updated", 2_000) != null) {
            notified[notifiedCount[0]++] = System.nanoTime();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "bench-notification-reader");
      notificationReader.setDaemon(true);
      notificationReader.start();
      long gcBefore = gcMillis();

      try (Connection c = ChangelogFixtures.jdbc(infra, DB); var ps = c.prepareStatement("INSERT INTO public.bench VALUES (?, 0)")) {
        try (var set = c.createStatement()) {
          // PostgreSQL's default, which applications run with: the commit returns once its WAL is
          // flushed, which is also when decoding can read it (the embedded server turns it off)
          set.execute("SET synchronous_commit = on");
        }
        long interval = 1_000_000_000L / rate;
        // warm-up at the same rate, not measured: the first seconds of a new JVM (JIT, first
        // Kafka requests) are a start-up cost, not the steady latency the target is about
        long warmStart = System.nanoTime();
        for (int i = 0; i < warmup * rate; i++) {
          long due = warmStart + i * interval;
          while (System.nanoTime() < due) {
            LockSupport.parkNanos(due - System.nanoTime());  // paces the writer; not a wait for a condition
          }
          ps.setInt(1, WARMUP_IDS + i);
          ps.executeUpdate();
        }
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
          long due = start + i * interval;
          while (System.nanoTime() < due) {
            LockSupport.parkNanos(due - System.nanoTime());  // paces the writer; not a wait for a condition
          }
          ps.setInt(1, i);
          ps.executeUpdate();
          committed[i] = System.nanoTime();
        }
        if (!steady.await(60, TimeUnit.SECONDS)) {
          throw new AssertionError("not every change reached both nodes");
        }
        notificationReader.join(60_000);  // it ends 2 s after the last notification
        stream.close();  // the burst below is about the relay, not about one client's stream
        subscriber.close();
        // throughput: many changes committed as fast as one writer can, in transactions of 100
        c.setAutoCommit(false);
        long burstStart = System.nanoTime();
        for (int i = 0; i < burst; i++) {
          ps.setInt(1, n + i);
          ps.executeUpdate();
          if (i % 100 == 99) {
            c.commit();
          }
        }
        c.commit();
        long writeDone = System.nanoTime();
        if (!all.await(120, TimeUnit.SECONDS)) {
          throw new AssertionError("the burst did not reach node B");
        }
        long gcSteady = gcMillis() - gcBefore;
        System.out.printf("[bench] load average %s%n", java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
        System.out.printf("[bench] steady %d changes/s for %d s after %d s of warm-up, one change per commit, commit -> local bus:%n",
            rate, seconds, warmup);
        print("node A (runs the relay)", minus(arrivedA, committed));
        print("node B", minus(arrivedB, committed));
        print("on the topic (plain consumer, fetch.max.wait.ms 5)", minus(onTopic, committed));
        print("topic -> node B's bus", minus(arrivedB, onTopic));
        System.out.printf("[bench]   MCP notifications received on node B's GET stream during warm-up and steady run: %d%n", notifiedCount[0]);
        print("MCP client subscribed on node B: commit -> first notifications/resources/updated after it",
            firstAfter(Arrays.copyOf(notified, notifiedCount[0]), Arrays.copyOf(committed, n)));
        System.out.printf("[bench]   GC time in this JVM during the steady run: %d ms%n", gcSteady);
        perSecond("node B, by second of the run", minus(arrivedB, committed), rate);
        System.out.printf("[bench] burst of %d changes (100 per commit): written in %d ms, on node B's bus after %d ms: %.0f changes/s end to end%n",
            burst, (writeDone - burstStart) / 1_000_000, (burstDone[0] - burstStart) / 1_000_000,
            burst * 1e9 / (burstDone[0] - burstStart));
      }
    } finally {
      TestNodes.stop(b);
      TestNodes.stop(a);
    }
  }

  private static long[] minus(long[] later, long[] earlier) {
    long[] d = new long[later.length];
    for (int i = 0; i < later.length; i++) {
      d[i] = later[i] == 0 ? Long.MAX_VALUE : later[i] - earlier[i];
    }
    return d;
  }

  /** For each commit, the time until the first arrival at or after it; MAX_VALUE when none came. */
  private static long[] firstAfter(long[] arrivals, long[] commits) {
    long[] sorted = arrivals.clone();
    Arrays.sort(sorted);
    long[] d = new long[commits.length];
    for (int i = 0; i < commits.length; i++) {
      int at = Arrays.binarySearch(sorted, commits[i]);
      int next = at >= 0 ? at : -at - 1;
      d[i] = next < sorted.length ? sorted[next] - commits[i] : Long.MAX_VALUE;
    }
    return d;
  }

  private static long gcMillis() {
    long sum = 0;
    for (var gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
      sum += Math.max(0, gc.getCollectionTime());
    }
    return sum;
  }

  /** p99 and max of each second's changes, to tell a warm-up from a steady tail. */
  private static void perSecond(String what, long[] nanos, int rate) {
    StringBuilder b = new StringBuilder();
    for (int from = 0; from < nanos.length; from += rate) {
      long[] part = Arrays.copyOfRange(nanos, from, Math.min(nanos.length, from + rate));
      Arrays.sort(part);
      b.append(String.format(" %d:%.0f/%.0f", from / rate, part[(int) (part.length * 0.99)] / 1e6, part[part.length - 1] / 1e6));
    }
    System.out.printf("[bench]   %s (p99/max ms):%s%n", what, b);
  }

  private static void readTopic(SharedInfra infra, String topic, long[] arrived, int n, CountDownLatch positioned) {
    try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<String, String>(Map.<String, Object>of(
        org.apache.kafka.clients.consumer.ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, infra.kafkaBootstrapServers(),
        org.apache.kafka.clients.consumer.ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false,
        org.apache.kafka.clients.consumer.ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5,
        org.apache.kafka.clients.consumer.ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, org.apache.kafka.common.serialization.StringDeserializer.class,
        org.apache.kafka.clients.consumer.ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, org.apache.kafka.common.serialization.StringDeserializer.class))) {
      var tps = consumer.partitionsFor(topic, java.time.Duration.ofSeconds(30)).stream()
          .map(p -> new org.apache.kafka.common.TopicPartition(topic, p.partition())).toList();
      consumer.assign(tps);
      consumer.seekToEnd(tps);
      tps.forEach(consumer::position);
      positioned.countDown();
      int seen = 0;
      long deadline = System.nanoTime() + 120_000_000_000L;
      while (seen < n && System.nanoTime() < deadline) {
        for (var r : consumer.poll(java.time.Duration.ofMillis(100))) {
          JsonArray key = new JsonObject(r.value()).getJsonArray("key");
          int id = key == null ? -1 : key.getInteger(0);
          if (id >= 0 && id < n && arrived[id] == 0) {
            arrived[id] = System.nanoTime();
            seen++;
          }
        }
      }
    }
  }

  private static void print(String node, long[] nanos) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    System.out.printf("[bench]   %s: p50 %.1f ms, p99 %.1f ms, max %.1f ms%n", node,
        sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.99)] / 1e6, sorted[sorted.length - 1] / 1e6);
  }
}
