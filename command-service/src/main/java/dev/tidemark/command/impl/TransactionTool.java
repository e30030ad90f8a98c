package dev.tidemark.command.impl;

import dev.tidemark.database.FunctionGuard;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;

/** {@code transaction}: several statements, in order, in the one transaction; each sees the ones before it. */
public final class TransactionTool implements ChangeTool {

  private final ExecuteTool execute;

  public TransactionTool(FunctionGuard functions) {
    this.execute = new ExecuteTool(functions);
  }

  @Override
  public Future<Long> apply(SqlConnection conn, JsonObject args) {
    JsonArray statements = args.getJsonArray("statements");
    Future<Long> chain = Future.succeededFuture(0L);
    for (int i = 0; i < statements.size(); i++) {
      JsonObject s = statements.getJsonObject(i);
      String at = "statements/" + i;
      chain = chain.compose(total -> execute.run(conn, s.getString("sql"), s.getJsonArray("params", new JsonArray()),
              at + "/sql", at + "/params")
          .map(n -> total < 0 || n < 0 ? -1L : total + n));
    }
    return chain;
  }

  /**
   * Statements that are all plain inserts write the rows the proposal showed, in the order the
   * change wrote them (a later statement's VALUES that took currval() are then the values shown
   * too); when any statement is not one, every statement runs again.
   */
  @Override
  public Future<Applied> applyApproved(SqlConnection conn, JsonObject args, ShownInserts shown) {
    JsonArray statements = args.getJsonArray("statements");
    Future<List<ShownInserts.Target>> chain = Future.succeededFuture(new ArrayList<>());
    for (int i = 0; i < statements.size(); i++) {
      JsonObject s = statements.getJsonObject(i);
      String at = "statements/" + i;
      chain = chain.compose(targets -> targets == null ? Future.succeededFuture(null)
          : execute.plainInsert(conn, s.getString("sql"), s.getJsonArray("params", new JsonArray()), at + "/sql", at + "/params")
              .map(target -> {
                if (target == null) {
                  return null;
                }
                targets.add(target);
                return targets;
              }));
    }
    return chain.compose(targets -> targets == null ? applyReturning(conn, args)
        : shown.write(conn, execute.functions(), targets, () -> applyReturning(conn, args)));
  }
}
