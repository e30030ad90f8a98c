package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One caller floods its role with slow statements; another caller of the same role keeps being
 * served, promptly, while the flood lasts. The flooder holds no more than its share of the pool
 * (database.caller-share-percent of database.pool-size), and its calls past the share wait for its
 * own and are then refused retriably, naming the limit and when to retry.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FairShareIT {

  private static final int POOL = 4;
  private static final long POOL_WAIT_MS = 1_000;
  private static final int FLOOD = 16;
  private static final String FLOOD_SQL = "SELECT pg_sleep(3) AS flood";
  /** Another token of the flooder's role: the victim is ServiceHarness.WRITER. */
  private static final Caller FLOODER = new Caller("it-flooder", "integration tests (flooder)", DatabaseSetup.WRITER_ROLE,
      Access.READ_WRITE, List.of("*"));

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    harness = QueryRole.start(infra, Map.of(ConfigKey.DATABASE_POOL_SIZE, String.valueOf(POOL),
        ConfigKey.DATABASE_POOL_WAIT_MS, String.valueOf(POOL_WAIT_MS), ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "5000",
        ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "50"));
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  /** Statements of the flood running now, as PostgreSQL sees them. */
  private long flooding() {
    return TestDatabases.running(infra, ServiceHarness.DATABASE, FLOOD_SQL);
  }

  @Test
  void anotherCallerOfTheRoleIsServedPromptlyWhileOneCallerFloodsItWithSlowStatements() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(FLOOD);
    AtomicBoolean sampling = new AtomicBoolean(true);
    AtomicLong mostAtOnce = new AtomicLong();
    try {
      List<CompletableFuture<ToolReply>> flood = new ArrayList<>();
      for (int i = 0; i < FLOOD; i++) {
        flood.add(CompletableFuture.supplyAsync(() -> harness.call(FLOODER, "query", new JsonObject().put("sql", FLOOD_SQL)), threads));
      }
      Await.that("the flood's statements running", Duration.ofSeconds(20), () -> flooding() >= 1);
      CompletableFuture<Void> sampler = CompletableFuture.runAsync(() -> {
        while (sampling.get()) {
          mostAtOnce.accumulateAndGet(flooding(), Math::max);
        }
      });

      // the victim: sequential calls of the same role while the flood holds its share
      int calls = 10;
      int served = 0;
      long slowest = 0;
      long total = 0;
      List<String> failures = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        long started = System.nanoTime();
        ToolReply reply = harness.call(ServiceHarness.WRITER, "query", new JsonObject().put("sql", "SELECT " + i + " AS victim"));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        slowest = Math.max(slowest, ms);
        total += ms;
        if (reply.error() == null) {
          served++;
        } else {
          failures.add(reply.error().encode());
        }
      }
      boolean floodStillRunning = flooding() > 0;
      System.out.printf("fair share: the other caller got %d of %d calls answered during the flood, %d ms on average, %d ms at most%n",
          served, calls, total / calls, slowest);
      assertTrue(floodStillRunning, "the victim's calls were not measured during the flood");
      assertEquals(calls, served, () -> "the other caller was refused during the flood: " + failures);
      assertTrue(slowest < POOL_WAIT_MS / 2, "the other caller waited " + slowest + " ms for a call: starved by the flood");

      int ok = 0;
      List<JsonObject> refused = new ArrayList<>();
      for (CompletableFuture<ToolReply> f : flood) {
        ToolReply reply = f.get(60, TimeUnit.SECONDS);
        if (reply.error() == null) {
          ok++;
        } else {
          refused.add(reply.error());
        }
      }
      sampling.set(false);
      sampler.get(10, TimeUnit.SECONDS);
      System.out.printf("fair share: the flooder had %d statements running at most, %d calls ran, %d were refused%n",
          mostAtOnce.get(), ok, refused.size());
      assertTrue(mostAtOnce.get() <= POOL / 2, "the flooder held " + mostAtOnce.get() + " of " + POOL + " connections at once");
      assertTrue(ok >= POOL / 2, "the flooder's own share ran: " + ok);
      assertTrue(!refused.isEmpty(), "no call of the flood was refused");
      for (JsonObject error : refused) {
        assertEquals("UNAVAILABLE", error.getString("code"), error::encode);
        assertEquals(true, error.getBoolean("retriable"));
        assertEquals("connection", error.getString("waited_for"));
        assertEquals("database.caller-share-percent", error.getString("limit"), error::encode);
        assertEquals(POOL / 2, error.getInteger("max_connections"));
        long retry = error.getLong("retry_after_ms");
        assertTrue(retry >= 100 && retry <= 5_000, "retry_after_ms " + retry);
        assertTrue(error.getString("message").contains("did not start"), error.getString("message"));
      }
    } finally {
      sampling.set(false);
      threads.shutdownNow();
    }
    Await.that("the flood's end", Duration.ofSeconds(20), () -> flooding() == 0);
    // its share back, the flooder is served again
    assertNull(harness.call(FLOODER, "query", new JsonObject().put("sql", "SELECT 1 AS after_flood")).error());
  }
}
