package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The command role in a child JVM, killed with SIGKILL at seeded random moments and, through
 * the after-commit crash point, right after a commit and before its reply; clients retry every
 * command with its key until it succeeds. Each command inserts a row and bumps a counter, so an
 * command applied twice or lost shows in the tables and in the changelog.
 */
@ExtendWith(InfraExtension.class)
class ChangeCrashSafetyIT {

  static final String DB = "change_crash_it";
  static final Path JAR = Path.of("target", "tidemark.jar");
  static final long SEED = 20261129L;
  /**
   * Enough that the clients are still committing at the tenth kill however fast the machine is: at
   * 200 a quiet run finished every command after 8 kills (the kills come every 0.2 to 1.7 s, plus
   * the restart), and the test asserts that all 10 happened under load.
   */
  static final int COMMANDS = 200;
  static final int CLIENTS = 4;
  static final int KILLS = 6;
  /** What {@code CrashPoint} halts the JVM with. */
  static final int CRASH_POINT_EXIT = 137;

  private long count(SharedInfra infra, String sql) throws Exception {
    try (Connection c = ChangelogFixtures.jdbc(infra, DB); ResultSet r = c.createStatement().executeQuery(sql)) {
      r.next();
      return r.getLong(1);
    }
  }

  private static Process startChild(SharedInfra infra, String cluster, int port, String members, long seed) throws Exception {
    // the child JVM starts some 25 times: with the client compiler only and a small heap, as
    // FaultsClusterIT's children, each start takes less of the two cores the other test JVM shares
    List<String> cmd = List.of(ProcessHandle.current().info().command().orElse("java"),
        "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-Dtidemark.crash.after-commit=0.03", "-Dtidemark.crash.seed=" + seed,
        "-Djava.io.tmpdir=" + Path.of("target").toAbsolutePath(), "-jar", JAR.toString(), "serve");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(Path.of("target", "crash-it-child.log").toFile()));
    Map<String, String> env = pb.environment();
    env.put(ConfigKey.ROLES.envName(), "command");
    env.put(ConfigKey.DATABASE_URL.envName(), infra.postgres().url(DB));
    env.put(ConfigKey.DATABASE_USER.envName(), infra.postgres().user());
    env.put(ConfigKey.DATABASE_PASSWORD.envName(), infra.postgres().password());
    env.put(ConfigKey.DATABASE_CALLER_PASSWORDS.envName(), TestNodes.config(infra, cluster, 0, "", "command")
        .get(ConfigKey.DATABASE_CALLER_PASSWORDS));
    env.put(ConfigKey.CLUSTER_NAME.envName(), cluster);
    env.put(ConfigKey.CLUSTER_HOST.envName(), "127.0.0.1");
    env.put(ConfigKey.CLUSTER_PORT.envName(), String.valueOf(port));
    env.put(ConfigKey.CLUSTER_MEMBERS.envName(), members);
    env.put(ConfigKey.OPS_HOST.envName(), "127.0.0.1");
    env.put(ConfigKey.OPS_PORT.envName(), "0");
    env.put(ConfigKey.COMMAND_DIRECT_COMMIT_ROLES.envName(), "tidemark_writer");
    Process p = pb.start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith("Tidemark node")) {
        return p;
      }
    }
    // the gateway sends commands to the child as soon as its command consumer is registered, before
    // the node prints its line, so the crash point can halt a child that is still starting: that is
    // one more crash for the loop to restart, not a failed start
    if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == CRASH_POINT_EXIT) {
      return p;
    }
    throw new IllegalStateException("the command node did not start (" + (p.isAlive() ? "still running" : "exit " + p.exitValue())
        + "); see target/crash-it-child.log");
  }

  @Test
  void everyCommandIsAppliedExactlyOnceAcrossKillsOfTheCommandNode(SharedInfra infra) throws Exception {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.cr_log, public.cr_counter",
        "CREATE TABLE public.cr_log (id bigserial PRIMARY KEY, command int NOT NULL)",
        "CREATE TABLE public.cr_counter (id int PRIMARY KEY, n int NOT NULL)",
        "INSERT INTO public.cr_counter VALUES (1, 0)",
        "GRANT SELECT, INSERT, UPDATE ON public.cr_log, public.cr_counter TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    String cluster = TestNodes.clusterName();
    int[] ports = FreePorts.allocate(2);
    String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
    Map<ConfigKey, String> gateway = TestNodes.config(infra, cluster, ports[0], members, "gateway");
    gateway.put(ConfigKey.DATABASE_URL, infra.postgres().url(DB));
    gateway.put(ConfigKey.BUS_SEND_TIMEOUT_MS, "3000");
    TidemarkNode node = TestNodes.start(gateway);
    Random random = new Random(SEED);
    Process[] child = {startChild(infra, cluster, ports[1], members, random.nextLong())};
    AtomicInteger replayed = new AtomicInteger();
    AtomicInteger retries = new AtomicInteger();
    AtomicInteger next = new AtomicInteger();
    AtomicBoolean clientsDone = new AtomicBoolean();
    Set<String> failures = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
    int kills = 0;
    int restarts = 0;
    try {
      List<Future<?>> clients = new ArrayList<>();
      for (int t = 0; t < CLIENTS; t++) {
        clients.add(pool.submit(() -> {
          try (McpHttpClient c = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN)) {
            c.initialize();
            for (int command = next.getAndIncrement(); command < COMMANDS; command = next.getAndIncrement()) {
              JsonObject args = new JsonObject().put("statements", new JsonArray()
                      .add(new JsonObject().put("sql", "INSERT INTO public.cr_log (command) VALUES ($1)").put("params", new JsonArray().add(command)))
                      .add(new JsonObject().put("sql", "UPDATE public.cr_counter SET n = n + 1 WHERE id = 1")))
                  .put("idempotency_key", "crash-" + command);
              // patient: beside another test JVM that kills nodes of its own, a restart takes 10 to 20 s
              // and the child lives about a second, so a command may wait minutes for its turn
              long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
              while (true) {
                JsonObject result = c.callTool("transaction", args);
                if (result.getValue("isError") == null) {
                  replayed.addAndGet(result.getJsonObject("structuredContent").getBoolean("replayed") ? 1 : 0);
                  break;
                }
                JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
                // a client retries what the error says may succeed when sent again, with the same key
                if (!error.getBoolean("retriable") || System.nanoTime() > giveUp) {
                  failures.add(command + " " + error.getString("code"));
                  break;
                }
                retries.incrementAndGet();
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the client's backoff
              }
            }
          }
          return null;
        }));
      }
      // kills at seeded random moments while the clients run; a crash point may have killed the child already
      while (!clientsDone.get()) {
        if (kills < KILLS) {
          long waitMs = 200 + random.nextInt(1500);
          ChangelogFixtures.await("the next kill moment", Duration.ofMillis(waitMs + 1000), new java.util.function.BooleanSupplier() {
            final long until = System.nanoTime() + waitMs * 1_000_000L;

            @Override
            public boolean getAsBoolean() {
              return System.nanoTime() >= until || next.get() >= COMMANDS;
            }
          });
          if (child[0].isAlive()) {
            child[0].destroyForcibly();
            kills++;
          }
        }
        child[0].waitFor(2, TimeUnit.SECONDS);
        if (!child[0].isAlive() && next.get() < COMMANDS + CLIENTS) {
          child[0] = startChild(infra, cluster, ports[1], members, random.nextLong());
          restarts++;
        }
        clientsDone.set(clients.stream().allMatch(Future::isDone));
      }
      for (Future<?> f : clients) {
        f.get(10, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
      child[0].destroyForcibly();
      TestNodes.stop(node);
    }
    System.out.printf("[crash] %d kills from outside, %d restarts, %d retries, %d replayed outcomes%n", kills, restarts, retries.get(),
        replayed.get());
    assertTrue(failures.isEmpty(), "commands that failed for good: " + failures);
    assertTrue(kills >= KILLS, "killed " + kills + " times");
    assertTrue(replayed.get() > 0, "some commit landed but its reply was lost, and its retry got the stored outcome");
    assertEquals(COMMANDS, count(infra, "SELECT count(*) FROM public.cr_log"));
    assertEquals(COMMANDS, count(infra, "SELECT count(DISTINCT command) FROM public.cr_log"));
    assertEquals(COMMANDS, count(infra, "SELECT n FROM public.cr_counter WHERE id = 1"));
    assertEquals(COMMANDS, count(infra, "SELECT count(*) FROM tidemark.idempotency WHERE key LIKE 'crash-%'"));
    // the changelog is written by the relay from the WAL, with who made each change from its signed message
    TidemarkNode relay = TestNodes.startAlone(infra, "changelog", Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DB),
        ConfigKey.DATABASE_NAME, "crash"));
    try {
      ChangelogFixtures.awaitDecoded(infra, DB);
    } finally {
      TestNodes.stop(relay);
    }
    assertEquals(2L * COMMANDS, count(infra, "SELECT count(*) FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
        + " WHERE a.idempotency_key LIKE 'crash-%'"));
    assertEquals(0, count(infra, "SELECT count(*) FROM (SELECT a.idempotency_key FROM tidemark.changelog c JOIN tidemark.change_attribution a ON a.xid = c.xid"
        + " WHERE a.idempotency_key LIKE 'crash-%'"
        + " GROUP BY a.idempotency_key HAVING count(*) <> 2) x"), "the changelog agrees: each command's two changes once");
  }
}
