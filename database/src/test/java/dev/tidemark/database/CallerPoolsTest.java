package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.CallerPools.CallerDb;
import io.vertx.core.Vertx;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pools of each caller role, made on a role's first call by whichever instance or thread gets
 * there first. A pool connects only when a statement needs it, so none of these reaches PostgreSQL.
 */
class CallerPoolsTest {

  private final Vertx vertx = Vertx.vertx();
  private final DatabaseConfig database = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_CALLER_PASSWORDS,
      "tidemark_reader:r,tidemark_writer:w")).database();

  @AfterEach
  void close() throws Exception {
    vertx.close().await(10, TimeUnit.SECONDS);
  }

  private static Caller as(String name, String role) {
    return new Caller(name, name, role, Access.READ_ONLY, List.of("*"));
  }

  @Test
  void callersOfOneRoleShareItsPoolsAndAnotherRoleHasItsOwn() throws Exception {
    CallerPools pools = new CallerPools(vertx, database, null, CallerPools.Prepared.READS);
    CallerDb alice = pools.forCaller(as("alice", "tidemark_reader"));
    assertSame(alice, pools.forCaller(as("bob", "tidemark_reader")));
    assertNotSame(alice.pool(), alice.preparing(), "the prepared reads have a pool of their own");
    assertNotSame(alice, pools.forCaller(as("carol", "tidemark_writer")));
    pools.close().await(10, TimeUnit.SECONDS);
  }

  @Test
  void aRoleWithoutALoginIsRefusedAndARoleWithoutPreparedStatementsHasOnePool() {
    CallerPools pools = new CallerPools(vertx, database, null, CallerPools.Prepared.NONE);
    ToolException refused = assertThrows(ToolException.class, () -> pools.forCaller(as("mallory", "postgres")));
    assertEquals(ErrorCode.PERMISSION_DENIED, refused.code());
    assertSame(pools.forCaller(as("alice", "tidemark_reader")).pool(), pools.forCaller(as("alice", "tidemark_reader")).preparing());
  }

  @Test
  void firstCallsOfARoleOnManyThreadsAtOnceMakeOneSetOfPools() throws Exception {
    int threads = 8;
    CallerPools pools = new CallerPools(vertx, database, null, CallerPools.Prepared.WRITES);
    Set<CallerDb> made = Collections.newSetFromMap(new IdentityHashMap<>());
    Threads.together(threads, () -> List.of(pools.forCaller(as("alice", "tidemark_reader")), pools.forCaller(as("carol", "tidemark_writer"))))
        .forEach(made::addAll);
    assertEquals(2, made.size(), "one set of pools per role");
    assertTrue(made.contains(pools.forCaller(as("dave", "tidemark_reader"))) && made.contains(pools.forCaller(as("erin", "tidemark_writer"))),
        "the pools every later call gets");
    pools.close().await(10, TimeUnit.SECONDS);
  }
}
