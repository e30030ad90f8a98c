package dev.tidemark.database;

import io.vertx.core.Future;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.SqlConnection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections that run a call right now on this node, by the call's request id, so that a
 * cancellation arriving from any gateway can stop the statement where it runs.
 */
public final class RunningStatements {

  private static final Map<String, SqlConnection> RUNNING = new ConcurrentHashMap<>();

  private RunningStatements() {}

  public static void start(String requestId, SqlConnection conn) {
    RUNNING.put(requestId, conn);
  }

  public static void finish(String requestId) {
    RUNNING.remove(requestId);
  }

  /** {@code work}, cancellable on {@code conn} by the call's request id until it completes. */
  public static <T> Future<T> running(String requestId, SqlConnection conn, Future<T> work) {
    start(requestId, conn);
    return work.andThen(done -> RUNNING.remove(requestId, conn));
  }

  /**
   * Asks PostgreSQL to cancel whatever the call's connection runs (a cancel request on a new
   * connection, as the protocol defines it). True when the call runs on this node.
   */
  public static Future<Boolean> cancel(String requestId) {
    SqlConnection conn = RUNNING.get(requestId);
    if (!(conn instanceof PgConnection pg)) {
      return Future.succeededFuture(false);
    }
    return pg.cancelRequest().map(true);
  }
}
