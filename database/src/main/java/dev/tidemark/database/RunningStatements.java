package dev.tidemark.database;

import io.vertx.core.Future;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.SqlConnection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The connections that run a call right now on this node, by the call's request id, so that a
 * cancellation arriving from any gateway can stop the statement where it runs. PostgreSQL's cancel
 * request stops whatever the connection runs when it arrives: one sent as a call ends may reach the
 * call's closing statement (its rollback, and then the reset is skipped), or on the pool of plain
 * reads, which keeps its connections between calls without a reset, the next statement on that
 * connection, which then fails as cancelled. A cancel is sent at most once per call.
 */
public final class RunningStatements {

  private static final Map<String, SqlConnection> RUNNING = new ConcurrentHashMap<>();

  private RunningStatements() {}

  /** {@code work}, cancellable on {@code conn} by the call's request id until it completes. */
  public static <T> Future<T> running(String requestId, SqlConnection conn, Future<T> work) {
    RUNNING.put(requestId, conn);
    return work.andThen(done -> RUNNING.remove(requestId, conn));
  }

  /**
   * Asks PostgreSQL to cancel whatever the call's connection runs (a cancel request on a new
   * connection, as the protocol defines it). True when the call runs on this node.
   */
  public static Future<Boolean> cancel(String requestId) {
    // claimed: the query and the command role of a node both hear a cancellation, and one cancel request is enough
    SqlConnection conn = RUNNING.remove(requestId);
    if (!(conn instanceof PgConnection pg)) {
      return Future.succeededFuture(false);
    }
    return pg.cancelRequest().map(true);
  }
}
