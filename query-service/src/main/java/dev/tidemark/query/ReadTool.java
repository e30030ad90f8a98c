package dev.tidemark.query;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.database.CallerSessions;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/**
 * A read tool: runs inside {@link CallerSessions#readOnly}, so nothing it does outlives the call,
 * or, for a get_row on a plain table, as one statement that runs nothing of anyone else's
 * (CatalogCache).
 */
public interface ReadTool {

  /** @param db the connections of the caller's own role */
  Future<ToolReply> run(CallerDb db, ToolRequest request);

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
}
