package dev.tidemark.gateway;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What one node's gateway saw of each caller over the last hour, a minute at a time: tool calls by
 * tool, errors by code, calls refused by the rate limit and by the per-caller queue, and the streams
 * it holds open now. Built once per node and shared by every gateway instance of the node, each
 * counting from its own event loop (so it is safe to call from any thread); the console reads it (and each
 * node's console shares it with the cluster). Unlike {@code /metrics}, whose labels may carry no
 * caller, this is per caller, and it is shown only to the console's administrators.
 */
public final class GatewayActivity {

  /** How far back counts are kept. */
  public static final long WINDOW_MINUTES = 60;
  /** Callers counted at most in one minute; past it a minute's calls count under {@link #OTHERS}. */
  static final int CALLERS_PER_MINUTE = 10_000;
  public static final String OTHERS = "(others)";

  /** What one count is of: a call of a tool, an error of a code, or a refusal of a kind. */
  private record Key(long minute, String callerId, String kind, String label) {}

  private final Map<Key, LongAdder> counts = new ConcurrentHashMap<>();
  private final Map<String, String> names = new ConcurrentHashMap<>();
  private final List<Supplier<Map<String, Integer>>> streams = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final LongSupplier clock;
  private volatile long prunedMinute;

  public GatewayActivity() {
    this(System::currentTimeMillis);
  }

  GatewayActivity(LongSupplier clock) {
    this.clock = clock;
  }

  /** A tool call that ended with {@code outcome}: {@code ok}, or its error code. */
  public void call(String callerId, String callerName, String tool, String outcome) {
    long minute = minute();
    String who = admitted(minute, callerId, callerName);
    count(minute, who, "call", tool);
    if (!"ok".equals(outcome)) {
      count(minute, who, "error", outcome);
    }
  }

  /** A call refused before it ran: {@code rate_limit} (HTTP 429) or {@code queue} (the caller's queue was full or its wait ran out). */
  public void refused(String callerId, String callerName, String reason) {
    long minute = minute();
    count(minute, admitted(minute, callerId, callerName), "refused", reason);
  }

  /** Where the streams each caller holds open on this node are read from: the node's calls and streams in flight, given once. */
  public void streamsFrom(Supplier<Map<String, Integer>> source) {
    streams.add(source);
  }

  /**
   * The last hour by caller id: {@code {"<caller id>": {"name", "streams", "calls": {tool: n},
   * "errors": {code: n}, "rate_limited", "queue_refused"}}}; a caller with open streams and no call
   * in the hour is listed too.
   */
  public JsonObject snapshot() {
    long now = minute();
    prune(now);
    Map<String, JsonObject> out = new HashMap<>();
    counts.forEach((k, n) -> {
      if (k.minute() > now - WINDOW_MINUTES) {
        JsonObject c = out.computeIfAbsent(k.callerId(), this::empty);
        switch (k.kind()) {
          case "call" -> add(c.getJsonObject("calls"), k.label(), n.sum());
          case "error" -> add(c.getJsonObject("errors"), k.label(), n.sum());
          default -> c.put(k.label().equals("queue") ? "queue_refused" : "rate_limited",
              c.getLong(k.label().equals("queue") ? "queue_refused" : "rate_limited") + n.sum());
        }
      }
    });
    for (Supplier<Map<String, Integer>> source : streams) {
      source.get().forEach((caller, n) -> {
        JsonObject c = out.computeIfAbsent(caller, this::empty);
        c.put("streams", c.getInteger("streams") + n);
      });
    }
    JsonObject json = new JsonObject();
    out.forEach(json::put);
    return json;
  }

  private JsonObject empty(String callerId) {
    return new JsonObject().put("name", names.getOrDefault(callerId, callerId)).put("streams", 0).put("calls", new JsonObject())
        .put("errors", new JsonObject()).put("rate_limited", 0L).put("queue_refused", 0L);
  }

  private static void add(JsonObject counts, String label, long n) {
    counts.put(label, counts.getLong(label, 0L) + n);
  }

  private long minute() {
    return clock.getAsLong() / 60_000;
  }

  /** The caller counted as itself, unless this minute already counts too many others (a flood of new tokens). */
  private String admitted(long minute, String callerId, String callerName) {
    if (names.size() < CALLERS_PER_MINUTE || names.containsKey(callerId)) {
      names.putIfAbsent(callerId, callerName);
      return callerId;
    }
    names.putIfAbsent(OTHERS, OTHERS);
    return OTHERS;
  }

  private void count(long minute, String callerId, String kind, String label) {
    if (minute != prunedMinute) {
      prune(minute);
    }
    counts.computeIfAbsent(new Key(minute, callerId, kind, label), k -> new LongAdder()).increment();
  }

  /** Drops the minutes that left the window, and the names of callers no longer counted, once a minute. */
  private void prune(long now) {
    prunedMinute = now;
    List<Key> old = new ArrayList<>();
    counts.keySet().forEach(k -> {
      if (k.minute() <= now - WINDOW_MINUTES) {
        old.add(k);
      }
    });
    old.forEach(counts::remove);
    java.util.Set<String> counted = new java.util.HashSet<>();
    counts.keySet().forEach(k -> counted.add(k.callerId()));
    names.keySet().removeIf(id -> !counted.contains(id));
  }
}
