package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The node's parameter types of query statements, shared by every query instance. */
class ParamTypeCacheTest {

  private static final String SQL = "SELECT * FROM orders WHERE id = $1";

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

  @Test
  void typesAreKeptForTheTtlAndNotAfter() {
    ParamTypeCache cache = new ParamTypeCache(5_000, nanos::get);
    cache.put(SQL, new String[] {"int8"});
    nanos.addAndGet(5_000 * 1_000_000L);
    assertArrayEquals(new String[] {"int8"}, cache.get(SQL));
    nanos.incrementAndGet();
    assertNull(cache.get(SQL), "older than database.catalog-cache-ms");
  }

  @Test
  void aTtlOfZeroKeepsNothing() {
    ParamTypeCache cache = new ParamTypeCache(0, nanos::get);
    cache.put(SQL, new String[] {"int8"});
    assertNull(cache.get(SQL));
    assertEquals(0, cache.size());
  }

  @Test
  void theArrayPutIsCopiedSoItsCallerCannotChangeTheEntry() {
    ParamTypeCache cache = new ParamTypeCache(5_000, nanos::get);
    String[] types = {"int8", "text"};
    cache.put(SQL, types);
    types[0] = "bool";
    assertArrayEquals(new String[] {"int8", "text"}, cache.get(SQL));
  }

  @Test
  void dropForgetsOneStatementAndClearEveryOne() {
    ParamTypeCache cache = new ParamTypeCache(5_000, nanos::get);
    cache.put(SQL, new String[] {"int8"});
    cache.put("SELECT $1::text", new String[] {"text"});
    cache.drop(SQL);
    assertNull(cache.get(SQL));
    assertArrayEquals(new String[] {"text"}, cache.get("SELECT $1::text"));
    cache.clear();
    assertNull(cache.get("SELECT $1::text"));
  }

  @Test
  void pastItsBoundItStartsAgainEmpty() {
    ParamTypeCache cache = new ParamTypeCache(5_000, nanos::get);
    for (int i = 0; i < ParamTypeCache.MAX_STATEMENTS; i++) {
      cache.put("SELECT " + i, new String[0]);
    }
    assertEquals(ParamTypeCache.MAX_STATEMENTS, cache.size());
    cache.put(SQL, new String[] {"int8"});
    assertEquals(1, cache.size());
    assertNull(cache.get("SELECT 0"));
    assertArrayEquals(new String[] {"int8"}, cache.get(SQL));
  }

  @Test
  void instancesPuttingAtOnceStayNearItsBoundAndReadTheirOwnTypes() throws Exception {
    int threads = 8;
    int perThread = 4 * ParamTypeCache.MAX_STATEMENTS / threads;
    ParamTypeCache cache = new ParamTypeCache(5_000, nanos::get);
    AtomicLong misread = new AtomicLong();
    List<Callable<Void>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String thread = "t" + t;
      work.add(() -> {
        for (int i = 0; i < perThread; i++) {
          String sql = "SELECT " + thread + "_" + i;
          cache.put(sql, new String[] {sql});
          String[] read = cache.get(sql);
          // null when another instance's put started the cache again in between; never another statement's types
          if (read != null && !read[0].equals(sql)) {
            misread.incrementAndGet();
          }
        }
        return null;
      });
    }
    Threads.together(work);
    assertEquals(0, misread.get());
    // a put checks the bound and then adds, so each instance adds at most one past it
    assertTrue(cache.size() <= ParamTypeCache.MAX_STATEMENTS + threads - 1, "size " + cache.size());
  }
}
