package dev.tidemark.database;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The parameter types PostgreSQL inferred for a {@code query} statement, by its text, shared on
 * the node for as long as table shapes are ({@code database.catalog-cache-ms}) and dropped on a
 * schema change notice. Looking them up costs as much PostgreSQL time as the guard's EXPLAIN, and
 * knowing them lets the EXPLAIN go out with the Parse. Types that went stale only make the check
 * fail, and the query tool then checks again with fresh ones, so a stale entry costs a retry,
 * never a wrong answer: the statement itself still runs with the types PostgreSQL gives it. A
 * second cache of this kind holds the names of the types a statement returns that the client
 * cannot name itself (an enum, a domain, a composite type), by role and statement text, since the
 * role's search path decides which type a name means.
 */
public final class ParamTypeCache {

  /** Statements remembered at most; past it the cache starts again empty. */
  static final int MAX_STATEMENTS = 10_000;

  private record Entry(String[] types, long loadedAtNanos) {}

  private final long ttlNanos;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final LongSupplier nanos;

  public ParamTypeCache(long ttlMs) {
    this(ttlMs, System::nanoTime);
  }

  /** With a monotonic clock of a test's own, in nanoseconds. */
  ParamTypeCache(long ttlMs, LongSupplier nanos) {
    this.ttlNanos = ttlMs * 1_000_000L;
    this.nanos = nanos;
  }

  /** The types last seen for {@code sql}, or null. */
  public String[] get(String sql) {
    Entry e = entries.get(sql);
    return e == null || nanos.getAsLong() - e.loadedAtNanos() > ttlNanos ? null : e.types();
  }

  public void put(String sql, String[] types) {
    if (ttlNanos == 0) {
      return;
    }
    if (entries.size() >= MAX_STATEMENTS) {
      entries.clear();
    }
    entries.put(sql, new Entry(types.clone(), nanos.getAsLong()));
  }

  public void drop(String sql) {
    entries.remove(sql);
  }

  public void clear() {
    entries.clear();
  }

  /** How many statements it remembers now. */
  int size() {
    return entries.size();
  }
}
