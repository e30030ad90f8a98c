package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.LocalMap;
import io.vertx.core.shareddata.Shareable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The watch calls with {@code wait_ms} running on this node, per caller and database, across the
 * node's query instances: a caller may have {@code watch.max-waiting-per-caller} of them at once.
 * A waiting watch holds no connection, but each wakes on every changelog notice and reads the
 * changelog on Tidemark's own pool, which every caller shares; so one caller's many watches would
 * otherwise slow everyone's.
 */
final class WaitingWatches implements Shareable {

  static final String LIMIT = "watch.max-waiting-per-caller";
  private static final String MAP = "tidemark.waiting-watches";

  /** By caller: when each of its waiting watches answers at the latest. */
  private final Map<String, List<Long>> deadlines = new HashMap<>();

  /** The node's count for {@code database}, made by the first query instance that asks. */
  static WaitingWatches of(Vertx vertx, String database) {
    LocalMap<String, WaitingWatches> all = vertx.sharedData().getLocalMap(MAP);
    all.putIfAbsent(database, new WaitingWatches());
    return all.get(database);
  }

  /**
   * Counts a waiting watch of {@code caller} that answers by {@code deadlineMs}, and returns what
   * ends it (to run once); LIMIT_EXCEEDED when the caller already has {@code max} waiting here.
   */
  synchronized Runnable enter(String caller, long deadlineMs, int max) {
    List<Long> mine = deadlines.computeIfAbsent(caller, c -> new ArrayList<>());
    if (mine.size() >= max) {
      long soonest = mine.stream().mapToLong(Long::longValue).min().orElse(deadlineMs);
      long retryAfter = Math.max(0, soonest - System.currentTimeMillis());
      throw new ToolException(ErrorCode.LIMIT_EXCEEDED, "You already have " + max + " watch calls waiting on this node, the most one caller"
          + " may (" + LIMIT + "); this one did not start. One of them answers within " + retryAfter + " ms: call again then,"
          + " call without wait_ms, or follow fewer watches at once (one watch with a wider where often does).",
          new JsonObject().put("limit", LIMIT).put("max_waiting", max).put("retry_after_ms", retryAfter));
    }
    Long entry = deadlineMs;
    mine.add(entry);
    boolean[] left = {false};
    return () -> {
      synchronized (this) {
        if (left[0]) {
          return;
        }
        left[0] = true;
        mine.remove(entry);
        if (mine.isEmpty()) {
          deadlines.remove(caller, mine);
        }
      }
    };
  }
}
