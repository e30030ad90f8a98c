package dev.tidemark.command.impl;

import dev.tidemark.contract.Actions;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

/**
 * The tasks of the {@code io.modelcontextprotocol/tasks} extension ({@code tidemark.task}), as
 * Tidemark's login, for the gateways ({@link Actions#TASK_STORE}): each operation touches only a
 * task of the request's caller, so that another caller's task is as absent as one that never was.
 */
public final class TaskRows {

  public static final String PRUNE_SQL = "DELETE FROM tidemark.task WHERE expires_at < now() - interval '1 minute'";

  private final Pool pool;

  public TaskRows(Pool pool) {
    this.pool = pool;
  }

  /**
   * One operation ({@code op}) on task {@code id}: {@code create} (with {@code state} and
   * {@code expires_at_ms}; {@code written} false when the id is taken), {@code get} ({@code state},
   * absent when there is none), {@code replace} ({@code state} over {@code old}, only when the row
   * still holds {@code old} exactly; {@code written}) and {@code remove}.
   */
  public Future<ToolReply> answer(ToolRequest request) {
    JsonObject a = request.arguments();
    String id = a.getString("id", "");
    String caller = request.caller().id();
    String op = a.getString("op", "");
    return switch (op) {
      case "create" -> pool.preparedQuery("INSERT INTO tidemark.task (id, caller_id, state, expires_at)"
              + " VALUES ($1, $2, $3, to_timestamp($4::float8 / 1000)) ON CONFLICT (id) DO NOTHING")
          .execute(Tuple.of(id, caller, a.getString("state"), a.getLong("expires_at_ms")))
          .map(rows -> written(rows.rowCount() == 1));
      case "get" -> pool.preparedQuery("SELECT state FROM tidemark.task WHERE id = $1 AND caller_id = $2").execute(Tuple.of(id, caller))
          .map(rows -> {
            JsonObject out = new JsonObject();
            if (rows.size() > 0) {
              out.put("state", rows.iterator().next().getString("state"));
            }
            return ToolReply.ok("task " + id, out);
          });
      case "replace" -> pool.preparedQuery("UPDATE tidemark.task SET state = $4 WHERE id = $1 AND caller_id = $2 AND state = $3")
          .execute(Tuple.of(id, caller, a.getString("old"), a.getString("state")))
          .map(rows -> written(rows.rowCount() == 1));
      case "remove" -> pool.preparedQuery("DELETE FROM tidemark.task WHERE id = $1 AND caller_id = $2").execute(Tuple.of(id, caller))
          .map(rows -> written(rows.rowCount() == 1));
      default -> Future.succeededFuture(ToolReply.failed(new ToolException(ErrorCode.INVALID_ARGUMENTS, "unknown task operation " + op)));
    };
  }

  private static ToolReply written(boolean written) {
    return ToolReply.ok(written ? "written" : "not written", new JsonObject().put("written", written));
  }
}
