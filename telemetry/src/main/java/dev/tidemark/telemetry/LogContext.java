package dev.tidemark.telemetry;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.internal.ContextInternal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.MDC;

/**
 * The ids a log line names when it is written while a request runs: request, session, caller and
 * trace. They live on the request's own Vert.x context, not in the thread-local MDC: an event
 * loop runs the steps of many requests in turn, so a thread-local would hand one request's ids to
 * the next one's lines, while Vert.x runs every step of a request (its callbacks, replies and
 * timers) on that request's duplicated context. Off such a context (a CLI command, a Kafka
 * thread) the MDC is read instead.
 *
 * <p>Only ids go here, never what a caller sent or read.
 */
public final class LogContext {

  public static final String REQUEST_ID = "request_id";
  public static final String SESSION_ID = "session_id";
  public static final String CALLER_ID = "caller_id";
  public static final String TRACE_ID = "trace_id";

  private static final String KEY = "tidemark.log-context";

  private LogContext() {}

  /** Names {@code value} as {@code field} on every later line of the current request; nothing happens outside one. */
  public static void put(String field, String value) {
    ContextInternal request = request();
    if (request != null && value != null && !value.isEmpty()) {
      ids(request, true).put(field, value);
    }
  }

  /** The ids of the current request, or of the MDC off a request; never null. */
  public static Map<String, String> current() {
    ContextInternal request = request();
    if (request != null) {
      Map<String, String> ids = ids(request, false);
      return ids == null ? Map.of() : ids;
    }
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    return mdc == null ? Map.of() : mdc;
  }

  private static ContextInternal request() {
    Context ctx = Vertx.currentContext();
    // the event loop's own context is shared by every request it serves: only a duplicate is one request's
    return ctx instanceof ContextInternal c && c.isDuplicate() ? c : null;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> ids(ContextInternal request, boolean create) {
    Map<Object, Object> data = request.localContextData();
    return (Map<String, String>) (create ? data.computeIfAbsent(KEY, k -> new ConcurrentHashMap<String, String>()) : data.get(KEY));
  }
}
