package dev.tidemark.command.impl;

import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import java.util.regex.Pattern;

/** {@code undo_transaction}: every row one committed transaction changed, written back as it was before it. */
public final class UndoTransactionTool extends RestoreTool {

  /** A transaction id as changes_since reports it: an xid8, a number below 2^64. */
  private static final Pattern XID = Pattern.compile("[0-9]{1,20}");

  private final History history;
  private final Restorer restorer;

  /**
   * @param pool Tidemark's login on the served database
   * @param changelog its login on the database the changelog is stored in, which it reads
   */
  public UndoTransactionTool(DatabaseConfig database, Pool pool, Pool changelog, FunctionGuard functions) {
    this.history = new History(pool, changelog);
    this.restorer = new Restorer(database.schemas(), functions);
  }

  @Override
  public Future<Applied> applyReturning(SqlConnection conn, JsonObject args, boolean commit) {
    String xid = args.getString("transaction");
    if (!XID.matcher(xid).matches() || new java.math.BigInteger(xid).bitLength() > 64) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_ARGUMENTS, "transaction is a transaction id as changes_since"
          + " reports it in each change: digits only. Nothing was written.", new JsonObject().put("argument", "transaction")));
    }
    boolean overwrite = Boolean.TRUE.equals(args.getBoolean("overwrite"));
    // the caller's right to every table the transaction changed first: only then is anything more said of it
    return history.transaction(xid).compose(t -> restorer.check(conn, t.relids())
        .compose(x -> t.refusal() != null ? Future.failedFuture(t.refusal()) : restorer.restore(conn, t.rows(), overwrite, commit)));
  }
}
