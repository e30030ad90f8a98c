package dev.tidemark.query;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.SqlStates;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import dev.tidemark.query.CallerPools.CallerDb;
import dev.tidemark.query.impl.RunningStatements;
import io.vertx.sqlclient.Pool;
import java.util.function.Function;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

/** A read tool: runs inside {@link #readOnly}, so nothing it does outlives the call. */
public interface ReadTool {

  /** @param db the connections of the caller's own role */
  Future<ToolReply> run(CallerDb db, ToolRequest request);

  /**
   * Runs {@code work} in a READ ONLY transaction as the caller's role, with a statement timeout,
   * and always rolls back. Then the session is reset ({@code DISCARD ALL}, which must run outside a
   * transaction): what survives a rollback (session advisory locks, a LISTEN, prepared statements,
   * temporary tables, cursors held open, settings) never reaches the next call on the connection.
   *
   * <p>Round trips are what a read costs most, so the opening and the closing statements are
   * pipelined: {@code BEGIN READ ONLY}, the {@link #SETUP} of the role, the timeout and the
   * caller tag (bound, never spliced into the text) and the work's first statement go out
   * together, as do {@code ROLLBACK} and {@code DISCARD ALL}. PostgreSQL runs them in the order
   * they were sent on the connection, and a statement after one that failed fails too (the
   * transaction is aborted), so the work never runs outside the guard. The answer is returned as soon as the work is
   * done; the connection goes back to the pool only once the rollback and the reset have run, so
   * the next call never sees this one.
   */
  static <T> Future<T> readOnly(CallerDb db, ToolRequest request, long timeoutMs, Function<SqlConnection, Future<T>> work) {
    return readOnly(db, db.pool(), request, timeoutMs, true, work);
  }

  /**
   * Like {@link #readOnly(CallerDb, ToolRequest, long, Function)}, on {@code pool} (one of {@code db}'s); {@code resetSession} false skips
   * {@code DISCARD ALL}, for work whose statements Tidemark wrote and which runs no code anyone else
   * wrote (see {@link TableCatalog.Table#readRunsNoUserCode()}): the role and the timeout are set
   * for the transaction only and end with the rollback, and nothing else can be left behind.
   */
  static <T> Future<T> readOnly(CallerDb db, Pool pool, ToolRequest request, long timeoutMs, boolean resetSession,
      Function<SqlConnection, Future<T>> work) {
    return pool.getConnection().compose(conn -> {
      String identity;
      try {
        identity = db.identity(conn, request.caller(), timeoutMs);
      } catch (RuntimeException e) {
        // no key to sign with yet: nothing was sent, the connection goes back as it came
        return conn.close().transform(x -> Future.<T>failedFuture(e));
      }
      RunningStatements.start(request.requestId(), conn);
      Future<?> begun = conn.query("BEGIN READ ONLY").execute();
      Future<?> tagged = conn.preparedQuery(SETUP).execute(setupValues(timeoutMs, identity, request));
      Future<T> started;
      try {
        started = work.apply(conn);  // its first statement goes out right behind the setup, on the same connection
      } catch (RuntimeException e) {
        started = Future.failedFuture(e);
      }
      Future<T> worked = started;
      // wait for all three, so that the rollback always goes out after the work's last statement;
      // a setup that failed aborts the transaction, so the work failed too: report the setup's error
      Future<T> result = Future.join(begun, tagged, worked).transform(ignored -> begun.failed() ? Future.failedFuture(begun.cause())
          : tagged.failed() ? Future.failedFuture(tagged.cause()) : worked);
      result.onComplete(done -> {
        RunningStatements.finish(request.requestId());
        Future<?> rolledBack = conn.query("ROLLBACK").execute();
        Future<?> reset = resetSession ? resetSession(conn) : Future.succeededFuture();
        Future.join(rolledBack, reset).onComplete(x -> conn.close());
      });
      return result;
    });
  }

  /**
   * The statement timeout, the caller's signed identity (what {@code tidemark.caller()} reads) and
   * the W3C trace context of the span that runs the call ({@code tidemark.traceparent}, empty
   * outside a trace), for this transaction only (what SET LOCAL does). The connection already
   * logged in as the caller's role, so no role is taken on. One statement with bound values: on a
   * pool that keeps statements prepared it is parsed once per connection, which a trace written
   * into each statement's text (a comment, as some tracers do) would defeat.
   */
  String SETUP = "SELECT set_config('statement_timeout', $1, true), set_config('tidemark.identity', $2, true),"
      + " set_config('tidemark.traceparent', $3, true)";

  /** The values {@link #SETUP} binds, for {@code request} under its own trace context. */
  static Tuple setupValues(long timeoutMs, String identity, ToolRequest request) {
    return Tuple.of(String.valueOf(timeoutMs), identity, request.traceparent() == null ? "" : request.traceparent());
  }

  /** Ends everything a call could leave on its connection; a connection that fails this is broken anyway. */
  static Future<Void> resetSession(SqlConnection conn) {
    return conn.query(RESET_SESSION).execute().<Void>mapEmpty().otherwise((Void) null);
  }

  /** Run after the rollback, outside any transaction, as DISCARD ALL requires. */
  String RESET_SESSION = "DISCARD ALL";

  /**
   * The change position of a cursor's first page, once {@code staleness} says that none of the
   * tables the cursor reads changed since; CURSOR_STALE otherwise, so that a page never mixes two states.
   */
  static Future<String> checkFresh(StalenessCheck staleness, JsonObject cursor) {
    java.util.Set<String> tables = new java.util.LinkedHashSet<>();
    for (Object t : cursor.getJsonArray("t", new io.vertx.core.json.JsonArray())) {
      tables.add(String.valueOf(t));
    }
    String position = cursor.getString("pos", "");
    return staleness.changedSince(tables, position).compose(changed -> changed
        ? Future.failedFuture(new ToolException(ErrorCode.CURSOR_STALE,
            "A table this cursor reads changed since its first page. " + ErrorCode.CURSOR_STALE.hint(),
            new JsonObject().put("argument", "cursor")))
        : Future.succeededFuture(position));
  }

  /**
   * A failure caused by a value the caller sent for {@code argument}: a data exception (SQLSTATE
   * class 22, such as a value that is not a number) names the argument; anything else is classified as usual.
   */
  static Throwable argumentError(Throwable err, String argument) {
    if (err instanceof PgException pg && pg.getSqlState() != null && pg.getSqlState().startsWith("22")) {
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
  static String privilegeDenied(String message) {
    return message != null && message.startsWith("permission denied for ") && !message.contains(" role ")
        ? message : "permission denied: your role lacks a privilege this statement needs";
  }

  /** A SQL string literal of {@code text}, for text Tidemark itself built (quoted identifiers), never for a caller's value. */
  static String quoteLiteralText(String text) {
    return "'" + text.replace("'", "''") + "'";
  }

  /** Double-quotes an identifier so that any name, even an odd one, is taken literally. */
  static String quoteIdent(String name) {
    return "\"" + name.replace("\"", "\"\"") + "\"";
  }

  /** Classifies a failure once: tool errors pass through, PostgreSQL errors by SQLSTATE. */
  static ToolException toToolException(Throwable err) {
    if (err instanceof ToolException te) {
      return te;
    }
    if (err instanceof PgException pg) {
      ErrorCode code = SqlStates.classify(pg.getSqlState());
      // a data exception's text quotes the offending value: name the kind of fault instead
      String why = pg.getSqlState() != null && pg.getSqlState().startsWith("22")
          ? SqlStates.describeDataException(pg.getSqlState())
          : "42501".equals(pg.getSqlState()) ? privilegeDenied(pg.getErrorMessage()) : pg.getErrorMessage();
      return new ToolException(code, "PostgreSQL refused the statement (SQLSTATE " + pg.getSqlState() + "): "
          + why + ". " + code.hint(), new JsonObject().put("sqlstate", pg.getSqlState()));
    }
    // a refused connection, or one PostgreSQL reset as it stopped (ConnectException is a SocketException)
    if (err instanceof io.vertx.sqlclient.ClosedConnectionException || err instanceof java.net.SocketException
        || err.getCause() instanceof java.net.SocketException || err instanceof io.vertx.core.impl.NoStackTraceTimeoutException) {
      return new ToolException(ErrorCode.UNAVAILABLE, "The database could not be reached. " + ErrorCode.UNAVAILABLE.hint());
    }
    org.slf4j.LoggerFactory.getLogger(ReadTool.class).error("a read tool failed unexpectedly", err);
    return new ToolException(ErrorCode.INTERNAL, "The read failed unexpectedly. " + ErrorCode.INTERNAL.hint());
  }
}
