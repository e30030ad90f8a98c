package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.WaitedFor;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

/**
 * Turns what a statement failed with into the error a caller gets, by SQLSTATE and never by
 * message text, in one place for reads and writes: {@link SqlStates} maps a SQLSTATE to its code,
 * and this class words the message so that it names no other role and quotes no value.
 */
public final class SqlErrors {

  private static final String CONSTRAINT_COLUMNS_SQL = """
      SELECT array_agg(a.attname::text ORDER BY k.ord) AS columns
        FROM pg_constraint c
        JOIN pg_class r ON r.oid = c.conrelid
        JOIN pg_namespace n ON n.oid = r.relnamespace
        CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum
       WHERE c.conname = $1 AND n.nspname = $2 AND r.relname = $3""";

  private SqlErrors() {}

  /**
   * A failure caused by a value the caller sent for {@code argument}: a data exception (SQLSTATE
   * class 22, such as a value that is not a number) names the argument; anything else is classified as usual.
   */
  public static Throwable argumentError(Throwable err, String argument) {
    if (err instanceof PgException pg && SqlStates.inClass(err, SqlStates.DATA_EXCEPTION)) {
      return new ToolException(ErrorCode.INVALID_ARGUMENTS, "A value in " + argument + " does not fit its column: "
          + SqlStates.describeDataException(pg.getSqlState()) + " (SQLSTATE " + pg.getSqlState() + "). Check the column types with"
          + " describe_table and send " + argument + " again.", new JsonObject().put("argument", argument).put("sqlstate", pg.getSqlState()));
    }
    return err;
  }

  /**
   * What a refused privilege says, without naming any role: PostgreSQL's text names the role when
   * a statement tried to take one on ("permission denied to set role ..."), and a refusal never
   * names another role. Which object was refused (a table, a column) is the caller's to know.
   */
  public static String privilegeDenied(String message) {
    return message != null && message.startsWith("permission denied for ") && !message.contains(" role ")
        ? message : "permission denied: your role lacks a privilege this statement needs";
  }

  /** Classifies a failure once: tool errors pass through, PostgreSQL errors by SQLSTATE. */
  public static ToolException toToolException(Throwable err) {
    return toToolException(err, null);
  }

  /**
   * Like {@link #toToolException(Throwable)}, for a statement the caller wrote in {@code argument}
   * ({@code sql}, {@code statements}): a refusal of its text as INVALID_ARGUMENTS names it.
   */
  public static ToolException toToolException(Throwable err, String argument) {
    if (err instanceof ToolException te) {
      return te;
    }
    if (poolExhausted(err)) {
      return waitedForConnection();
    }
    if (err instanceof PgException pg) {
      ErrorCode code = SqlStates.classify(pg.getSqlState());
      // a data exception's text quotes the offending value: name the kind of fault instead
      String why = SqlStates.inClass(err, SqlStates.DATA_EXCEPTION)
          ? SqlStates.describeDataException(pg.getSqlState())
          : SqlStates.is(err, SqlStates.INSUFFICIENT_PRIVILEGE) ? privilegeDenied(pg.getErrorMessage()) : pg.getErrorMessage();
      JsonObject details = new JsonObject().put("sqlstate", pg.getSqlState());
      if (code == ErrorCode.TIMEOUT) {
        // it had a connection: the time went to the statement itself
        details.put(WaitedFor.KEY, WaitedFor.STATEMENT.wire());
      }
      if (code == ErrorCode.INVALID_ARGUMENTS && argument != null) {
        // a syntax error, or a table or column that does not exist, is in the statement the caller wrote
        details.put("argument", argument);
      }
      // a statement past its time ran, and was stopped: "refused" would send the caller looking for a fault in it
      String what = code == ErrorCode.TIMEOUT ? "PostgreSQL cancelled the statement" : "PostgreSQL refused the statement";
      return new ToolException(code, what + " (SQLSTATE " + pg.getSqlState() + "): " + why + ". " + code.hint(), details);
    }
    // a refused connection, or one PostgreSQL reset as it stopped (ConnectException is a SocketException)
    if (err instanceof io.vertx.sqlclient.ClosedConnectionException || err instanceof java.net.SocketException
        || err.getCause() instanceof java.net.SocketException || err instanceof io.vertx.core.impl.NoStackTraceTimeoutException) {
      return new ToolException(ErrorCode.UNAVAILABLE, "The database could not be reached. " + ErrorCode.UNAVAILABLE.hint());
    }
    org.slf4j.LoggerFactory.getLogger(SqlErrors.class).error("a statement failed unexpectedly", err);
    return new ToolException(ErrorCode.INTERNAL, "The call failed unexpectedly. " + ErrorCode.INTERNAL.hint());
  }

  /**
   * A pool that had no free connection within its wait ({@code database.pool-wait-ms}), or whose
   * queue of waiting calls was full: the Vert.x pool's own failures, told apart from a connection
   * that could not be opened (which is the database being unreachable).
   */
  public static boolean poolExhausted(Throwable err) {
    // the pool's own failures, as Vert.x 5 words them; a connection it could not open fails otherwise
    String message = err.getMessage() == null ? "" : err.getMessage();
    return err instanceof io.vertx.core.http.ConnectionPoolTooBusyException
        || err instanceof io.vertx.core.impl.NoStackTraceThrowable && message.equals("Timeout")
        || err.getClass() == io.vertx.core.VertxException.class && message.startsWith("Timeout waiting for connection");
  }

  /**
   * {@code err} worded for a log line about Tidemark's own work (reading the key ring, polling revocations): a pool's
   * bare "Timeout waiting for connection" says which wait ran out, and which key sets it.
   */
  public static String describe(Throwable err) {
    return poolExhausted(err)
        ? "no connection of Tidemark's pool came free within database.pool-wait-ms (the host or PostgreSQL is busy; it is tried again)"
        : String.valueOf(err.getMessage());
  }

  /**
   * A connection of {@code pool} for a caller's call; when none became free in time, UNAVAILABLE
   * (retriable, {@code waited_for: "connection"}) rather than the pool's own bare "Timeout". A
   * connection that could not be opened fails as it did, and is classified as the database being
   * unreachable.
   */
  public static Future<SqlConnection> connection(Pool pool) {
    return pool.getConnection().recover(err -> Future.failedFuture(couldNotConnect(err) ? err : waitedForConnection()));
  }

  /**
   * A connection the pool tried to open and could not (refused, reset, closed, refused by the
   * server, a failed handshake): the database is unreachable. Any other failure to get one is the
   * pool's own (its wait ran out, its queue was full), whatever its wording.
   */
  private static boolean couldNotConnect(Throwable err) {
    for (Throwable t = err; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof PgException || t instanceof java.net.SocketException || t instanceof java.nio.channels.ClosedChannelException
          || t instanceof io.vertx.sqlclient.ClosedConnectionException || t instanceof javax.net.ssl.SSLException
          || t instanceof java.net.UnknownHostException) {
        return true;
      }
    }
    return false;
  }

  private static ToolException waitedForConnection() {
    return new ToolException(ErrorCode.UNAVAILABLE, "No database connection became free for this call in time (every connection"
        + " of its pool on this node was busy, or a new one could not be opened yet), so the call did not start: nothing was read"
        + " or changed. Retry in a moment, or send fewer calls at once.", WaitedFor.CONNECTION.details());
  }

  /**
   * Like {@link #toToolException}, and an integrity violation (SQLSTATE class 23) becomes
   * CONSTRAINT_VIOLATION naming the constraint, its table and its columns, looked up on {@code pool}
   * when PostgreSQL did not name the column.
   */
  public static Future<ToolException> classify(Pool pool, Throwable err) {
    if (err instanceof PgException pg && SqlStates.inClass(err, SqlStates.INTEGRITY_CONSTRAINT_VIOLATION)) {
      return constraintViolation(pool, pg);
    }
    return Future.succeededFuture(toToolException(err));
  }

  private static Future<ToolException> constraintViolation(Pool pool, PgException pg) {
    String kind = SqlStates.constraintKind(pg.getSqlState());
    String table = pg.getSchema() != null && pg.getTable() != null ? pg.getSchema() + "." + pg.getTable() : pg.getTable();
    JsonObject details = new JsonObject().put("sqlstate", pg.getSqlState()).put("kind", kind);
    if (pg.getConstraint() != null) {
      details.put("constraint", pg.getConstraint());
    }
    if (table != null) {
      details.put("table", table);
    }
    // the server's message names the constraint and never a value; its detail would, so it is left out
    String message = "The change breaks the " + kind + " constraint" + (pg.getConstraint() == null ? "" : " " + pg.getConstraint())
        + (table == null ? "" : " of " + table) + ": " + pg.getErrorMessage() + ". Nothing was written. " + ErrorCode.CONSTRAINT_VIOLATION.hint();
    Future<JsonArray> columns;
    if (pg.getColumn() != null) {
      columns = Future.succeededFuture(new JsonArray().add(pg.getColumn()));
    } else if (pg.getConstraint() != null && pg.getSchema() != null && pg.getTable() != null) {
      columns = pool.preparedQuery(CONSTRAINT_COLUMNS_SQL).execute(Tuple.of(pg.getConstraint(), pg.getSchema(), pg.getTable()))
          .map(rows -> {
            String[] names = rows.size() == 0 ? null : rows.iterator().next().getArrayOfStrings("columns");
            return names == null ? new JsonArray() : new JsonArray(java.util.List.of(names));
          })
          .otherwise(new JsonArray());
    } else {
      columns = Future.succeededFuture(new JsonArray());
    }
    return columns.map(cols -> new ToolException(ErrorCode.CONSTRAINT_VIOLATION, message, details.put("columns", cols)));
  }
}
