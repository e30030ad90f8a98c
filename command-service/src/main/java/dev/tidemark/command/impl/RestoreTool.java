package dev.tidemark.command.impl;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;

/** A change tool that writes rows back as the changelog recorded them: restore_rows and undo_transaction. */
abstract class RestoreTool implements ChangeTool {

  @Override
  public final boolean runsCallerSql() {
    return false;  // its statements are built from the catalog and the changelog, with every value bound
  }

  @Override
  public final Future<Long> apply(SqlConnection conn, JsonObject args) {
    return applyReturning(conn, args, false).map(Applied::affected);
  }

  /** Plans and commits differ: a commit refuses to restore over rows changed since unless told to. */
  @Override
  public abstract Future<Applied> applyReturning(SqlConnection conn, JsonObject args, boolean commit);
}
