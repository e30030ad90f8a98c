package dev.tidemark.database;

import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.database.CallerPools.Lent;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * How a statement runs as its caller, in one place for reads, plans, commits, migrations and
 * restores ({@link #inTransaction}): on a connection that logged in as the caller's own role
 * ({@link CallerPools}), in a transaction behind one setup statement that sets the statement
 * timeout, the caller's signed identity and the trace context for the transaction only, and
 * followed by a reset of whatever the call could leave on the connection.
 */
public final class CallerSessions {

  private CallerSessions() {}

  /**
   * Runs {@code work} in a READ ONLY transaction as the caller's role, with a statement timeout,
   * and always rolls back. Then the session is reset ({@code DISCARD ALL}, which must run outside a
   * transaction): what survives a rollback (session advisory locks, a LISTEN, prepared statements,
   * temporary tables, cursors held open, settings) never reaches the next call on the connection.
   * See {@link #inTransaction} for how its statements are pipelined.
   */
  public static <T> Future<T> readOnly(CallerDb db, ToolRequest request, long timeoutMs, Function<SqlConnection, Future<T>> work) {
    return readOnly(db, db.pool(), request, timeoutMs, true, work);
  }

  /**
   * Like {@link #readOnly(CallerDb, ToolRequest, long, Function)}, on {@code pool} (one of {@code db}'s); {@code resetSession} false skips
   * {@code DISCARD ALL}, for work whose statements Tidemark wrote and which runs no code anyone else
   * wrote (see {@link TableCatalog.Table#readRunsNoUserCode()}): the role and the timeout are set
   * for the transaction only and end with the rollback, and nothing else can be left behind.
   */
  public static <T> Future<T> readOnly(CallerDb db, Pool pool, ToolRequest request, long timeoutMs, boolean resetSession,
      Function<SqlConnection, Future<T>> work) {
    return read(db, pool, request, timeoutMs, resetSession, "BEGIN READ ONLY", work);
  }

  /**
   * Like {@link #readOnly(CallerDb, ToolRequest, long, Function)}, with every statement of {@code
   * work} reading one snapshot (REPEATABLE READ): several reads that must agree with each other,
   * such as the context of a batch of events.
   */
  public static <T> Future<T> readOnlySnapshot(CallerDb db, ToolRequest request, long timeoutMs, Function<SqlConnection, Future<T>> work) {
    return read(db, db.pool(), request, timeoutMs, true, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", work);
  }

  private static <T> Future<T> read(CallerDb db, Pool pool, ToolRequest request, long timeoutMs, boolean resetSession, String begin,
      Function<SqlConnection, Future<T>> work) {
    Transaction tx = new Transaction(begin, SETUP, false,
        (conn, failure) -> resetSession ? resetSession(conn) : Future.succeededFuture());
    return run(db, pool, request, timeoutMs, tx, session -> work.apply(session.conn()).map(Outcome::rollBack)).map(Outcome::value);
  }

  /**
   * Runs {@code work} in a read-write transaction as the caller's role, on {@code from} (one of
   * {@code db}'s pools), behind {@code setup} ({@link #SETUP}, or a statement that begins with it
   * and sets more for the transaction, bound to {@link #setupValues}): committed only when the work's
   * {@link Outcome} says so, rolled back otherwise. Then the session is reset as {@link
   * CallerDb#reset} resets a connection of {@code from}, so that nothing a statement set outlives the
   * call. A cancellation of the call stops its statement (see {@link RunningStatements}); the
   * transaction then rolls back.
   *
   * <p>This is the one way a statement runs as its caller, and the helper that reads use too.
   * Round trips are what a call costs most, so the opening and the closing statements are
   * pipelined: the BEGIN, the setup of the timeout and the caller's signed identity (bound, never
   * spliced into the text) and the work's first statements go out together, as do the COMMIT or
   * ROLLBACK and the reset. PostgreSQL runs them in the order they were sent on the connection, and
   * a statement after one that failed fails too (the transaction is aborted), so the work never
   * runs outside the guard; a setup that failed is the error reported. A read-write call's answer
   * waits for its transaction's end; a read's is returned as soon as its work is done. Either way
   * the connection goes back to its pool only once the end and the reset have run, so the next call
   * never sees this one.
   */
  public static <T> Future<Outcome<T>> inTransaction(CallerDb db, Pool from, ToolRequest request, long timeoutMs, String setup,
      Function<Session, Future<Outcome<T>>> work) {
    Transaction tx = new Transaction("BEGIN", setup, true, (conn, failure) -> db.reset(conn, from, failure));
    return run(db, from, request, timeoutMs, tx, work);
  }

  /** What a transaction's work decided: its value, and whether to commit (a read always rolls back). */
  public record Outcome<T>(T value, boolean commit) {

    public static <T> Outcome<T> rollBack(T value) {
      return new Outcome<>(value, false);
    }

    public static <T> Outcome<T> commit(T value) {
      return new Outcome<>(value, true);
    }
  }

  /** The connection a transaction runs on, and what its setup statement returned, for work that reads more of it than success. */
  public record Session(SqlConnection conn, Future<RowSet<Row>> setup) {}

  /** How a transaction begins, what sets it up, whether its answer waits for its end, and how its session is reset after. */
  private record Transaction(String begin, String setup, boolean awaitEnd, BiFunction<SqlConnection, Throwable, Future<Void>> reset) {}

  private static <T> Future<Outcome<T>> run(CallerDb db, Pool from, ToolRequest request, long timeoutMs, Transaction tx,
      Function<Session, Future<Outcome<T>>> work) {
    return db.connection(from, request.caller()).compose(lent -> {
      SqlConnection conn = lent.conn();
      String identity;
      try {
        identity = db.identity(conn, request.caller(), timeoutMs);
      } catch (RuntimeException e) {
        // no key to sign with yet: nothing was sent, the connection goes back as it came
        return lent.close().transform(x -> Future.<Outcome<T>>failedFuture(e));
      }
      Future<?> begun = conn.query(tx.begin()).execute();
      Future<RowSet<Row>> tagged = conn.preparedQuery(tx.setup()).execute(setupValues(timeoutMs, identity, request));
      Future<Outcome<T>> started;
      try {
        started = work.apply(new Session(conn, tagged));  // its first statement goes out right behind the setup, on the same connection
      } catch (RuntimeException e) {
        started = Future.failedFuture(e);
      }
      Future<Outcome<T>> worked = started;
      // wait for all three, so that the end always goes out after the work's last statement
      return RunningStatements.running(request.requestId(), conn, Future.join(begun, tagged, worked)
              .transform(ignored -> begun.failed() ? Future.failedFuture(begun.cause())
                  : tagged.failed() ? Future.failedFuture(tagged.cause()) : worked))
          .transform(done -> end(lent, tx, done));
    });
  }

  private static <T> Future<Outcome<T>> end(Lent lent, Transaction tx, AsyncResult<Outcome<T>> done) {
    boolean commit = done.succeeded() && done.result().commit();
    Future<?> ended = lent.conn().query(commit ? "COMMIT" : "ROLLBACK").execute();
    Future<Void> reset = tx.reset().apply(lent.conn(), done.cause());
    Future.join(ended, reset).onComplete(x -> lent.close());
    if (done.failed()) {
      return Future.failedFuture(done.cause());
    }
    return tx.awaitEnd() ? ended.map(v -> done.result()) : Future.succeededFuture(done.result());
  }

  /**
   * The statement timeout, the caller's signed identity (what {@code tidemark.caller()} reads) and
   * the W3C trace context of the span that runs the call ({@code tidemark.traceparent}, empty
   * outside a trace), for this transaction only (what SET LOCAL does). The connection already
   * logged in as the caller's role, so no role is taken on. One statement with bound values: on a
   * pool that keeps statements prepared it is parsed once per connection, which a trace written
   * into each statement's text (a comment, as some tracers do) would defeat.
   */
  public static final String SETUP = "SELECT set_config('statement_timeout', $1, true), set_config('tidemark.identity', $2, true),"
      + " set_config('tidemark.traceparent', $3, true)";

  /** The values {@link #SETUP} binds, for {@code request} under its own trace context. */
  public static Tuple setupValues(long timeoutMs, String identity, ToolRequest request) {
    return Tuple.of(String.valueOf(timeoutMs), identity, request.traceparent() == null ? "" : request.traceparent());
  }

  /** Ends everything a call could leave on its connection; a connection that fails this is broken anyway. */
  public static Future<Void> resetSession(SqlConnection conn) {
    return conn.query(RESET_SESSION).execute().<Void>mapEmpty().otherwise((Void) null);
  }

  /** Run after the rollback, outside any transaction, as DISCARD ALL requires. */
  public static final String RESET_SESSION = "DISCARD ALL";

  /**
   * Ends what a change on a connection of {@link CallerPools.Prepared#WRITES} could leave behind
   * (its statements are Tidemark's, but triggers and functions they fire are other people's code):
   * DISCARD ALL without DEALLOCATE ALL and DISCARD PLANS, so that Tidemark's prepared statements
   * stay parsed and planned for the next call of the same role. Such code can also reach those
   * statements: it sees their names in {@code pg_prepared_statements}, and a PL/pgSQL {@code
   * EXECUTE} can DEALLOCATE one and PREPARE other SQL under its name, which the next call would
   * run in its place. A statement prepared through SQL is marked {@code from_sql} (Tidemark
   * prepares only through the protocol), so a session that holds one ends itself here and its
   * connection leaves the pool; one whose statement was only dropped fails its next statement with
   * 26000, and {@link #endsSession} tells the caller to end it then.
   */
  public static Future<Void> resetKeepingStatements(SqlConnection conn) {
    // a statement of the reset that fails skips the ones after it, the check among them: a session
    // that could not be reset whole serves no further call either
    return conn.query(RESET_KEEPING_STATEMENTS).execute().<Void>mapEmpty().recover(err -> endSession(conn));
  }

  public static final String RESET_KEEPING_STATEMENTS = "CLOSE ALL; SET SESSION AUTHORIZATION DEFAULT; RESET ALL; UNLISTEN *;"
      + " SELECT pg_advisory_unlock_all(); DISCARD TEMP; DISCARD SEQUENCES;"
      + " SELECT pg_terminate_backend(pg_backend_pid()) FROM pg_prepared_statements WHERE from_sql LIMIT 1";

  /**
   * Whether {@code err} means a statement Tidemark prepared on the connection is gone (SQLSTATE
   * 26000; see {@link #resetKeepingStatements}): the connection must not serve another call.
   */
  public static boolean endsSession(Throwable err) {
    return SqlStates.is(err, SqlStates.INVALID_SQL_STATEMENT_NAME);
  }

  /** Ends the session of {@code conn} (its own backend), so that the pool drops the connection. */
  public static Future<Void> endSession(SqlConnection conn) {
    return conn.query("SELECT pg_terminate_backend(pg_backend_pid())").execute().<Void>mapEmpty().otherwise((Void) null);
  }

}
