package dev.tidemark.gateway.impl.tool;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;

/**
 * The watch calls with {@code wait_ms} each session has running on this gateway (one per node, shared by every instance,
 * since a session's requests may come on connections of any event loop; thread-safe by its lock): at most
 * {@code watch.max-waiting-per-session}, so that one session's long polls cannot take every one of
 * its caller's call slots ({@code auth.max-concurrent-calls}) from the caller's other sessions.
 */
public final class SessionWatches {

  static final String LIMIT = "watch.max-waiting-per-session";

  private final int max;
  private final Map<String, Integer> waiting = new HashMap<>();

  public SessionWatches(int max) {
    this.max = max;
  }

  /** Counts a waiting watch of {@code session} and returns what ends it (to run once); LIMIT_EXCEEDED past the limit. */
  synchronized Runnable enter(String session) {
    int now = waiting.getOrDefault(session, 0);
    if (now >= max) {
      throw new ToolException(ErrorCode.LIMIT_EXCEEDED, "This session already has " + max + " watch calls waiting on this gateway, the"
          + " most one session may (" + LIMIT + "); this one did not start. Wait for one of them to answer (within its wait_ms),"
          + " call without wait_ms, or follow fewer watches at once.", new JsonObject().put("limit", LIMIT).put("max_waiting", max));
    }
    waiting.put(session, now + 1);
    boolean[] left = {false};
    return () -> {
      synchronized (this) {
        if (!left[0]) {
          left[0] = true;
          waiting.computeIfPresent(session, (s, n) -> n == 1 ? null : n - 1);
        }
      }
    };
  }
}
