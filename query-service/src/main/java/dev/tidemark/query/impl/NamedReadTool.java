package dev.tidemark.query.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.query.ReadTool;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/**
 * A named read tool: its statement, with the caller's arguments and identity bound as values, run
 * exactly as {@code query} runs a statement (the caller's own login, a READ ONLY transaction that
 * is rolled back, the read guard and the function check, the statement timeout, pages and
 * cursors), a page holding at most the tool's limit of rows.
 */
public final class NamedReadTool implements ReadTool {

  private final QueryTool query;

  public NamedReadTool(QueryTool query) {
    this.query = query;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    NamedTool tool = request.namedTool();
    if (tool == null || tool.kind() != NamedTool.Kind.READ) {
      return Future.failedFuture(new ToolException(ErrorCode.NOT_FOUND, "This node has no read tool named " + request.tool() + "."));
    }
    JsonObject args;
    try {
      args = new JsonObject().put("sql", tool.statement()).put("params", tool.bind(request.arguments(), request.caller()))
          .put("limit", tool.limit());
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    if (request.arguments().getValue("cursor") instanceof String cursor) {
      args.put("cursor", cursor);
    }
    return query.run(db, request.withArguments(args))
        .map(reply -> ToolReply.ok(tool.name() + reply.summary().substring(reply.summary().indexOf(':')), reply.structured(), reply.rows()))
        .recover(err -> Future.failedFuture(tool.blame(err)));
  }
}
