package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.SqlStates;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import java.util.function.Function;
import io.vertx.sqlclient.SqlConnection;

/** A read tool: runs inside {@link #readOnly}, so nothing it does outlives the call. */
public interface ReadTool {

  Future<ToolReply> run(Pool pool, ToolRequest request);

  /**
   * Runs {@code work} in a READ ONLY transaction as the caller's role, with a statement timeout,
   * and always rolls back: settings and locks a statement takes end with the call.
   */
  static <T> Future<T> readOnly(Pool pool, ToolRequest request, long timeoutMs, Function<SqlConnection, Future<T>> work) {
    String setup = "SET TRANSACTION READ ONLY; SET LOCAL ROLE " + quoteIdent(request.caller().pgRole())
        + "; SET LOCAL statement_timeout = " + timeoutMs;
    return pool.withConnection(conn -> conn.begin().compose(tx -> conn.query(setup).execute()
        .compose(ignored -> conn.preparedQuery("SELECT set_config('tidemark.caller', $1, true)")
            .execute(io.vertx.sqlclient.Tuple.of(request.caller().name())))
        .compose(ignored -> work.apply(conn))
        .eventually(tx::rollback)));
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
      return new ToolException(code, "PostgreSQL refused the statement (SQLSTATE " + pg.getSqlState() + "): "
          + pg.getErrorMessage() + ". " + code.hint(), new JsonObject().put("sqlstate", pg.getSqlState()));
    }
    return new ToolException(ErrorCode.UNAVAILABLE, "The database could not be reached. " + ErrorCode.UNAVAILABLE.hint());
  }
}
