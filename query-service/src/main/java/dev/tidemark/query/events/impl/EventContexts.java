package dev.tidemark.query.events.impl;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.runtime.NamedCatalogs;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.CallerPools;
import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.KeyRingSource;
import dev.tidemark.database.PgJson;
import dev.tidemark.database.SqlErrors;
import dev.tidemark.query.impl.ReadGuard;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Events with their context and the reactions the caller may take (a consumer that
 * database.consumers declares): for each leased event, the named read tools of its context run
 * as the caller, with parameters taken from the event's row, all of the batch's reads in one READ
 * ONLY snapshot taken at delivery; and for each reaction the caller may call now, a causation
 * token sealed for this caller, this event's lease and that tool, which the command role opens into
 * the reaction's caused_by.
 */
public final class EventContexts {

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final CallerPools callers;
  private final KeyRingSource keys;
  private final FunctionGuard functions;

  public EventContexts(Vertx vertx, TidemarkConfig config, CallerPools callers, KeyRingSource keys, FunctionGuard functions) {
    this.vertx = vertx;
    this.config = config;
    this.callers = callers;
    this.keys = keys;
    this.functions = functions;
  }

  /** {@code reply} of events_next, each event with its context and reactions when its consumer declares them. */
  public Future<ToolReply> enrich(ToolRequest request, ToolReply reply) {
    NamedCatalog catalog = NamedCatalogs.of(vertx).get(request.database());
    NamedCatalog.Consumer declared = catalog.consumer(request.arguments().getString("consumer"));
    JsonArray events = reply.structured().getJsonArray("events");
    if (declared == null || events == null || events.isEmpty()) {
      return Future.succeededFuture(reply);
    }
    List<NamedTool> reactions = declared.reactions().stream().map(catalog::tool)
        .filter(t -> t != null && mayChange(request.caller(), t)).toList();
    List<NamedTool> context = declared.context().stream().map(c -> catalog.tool(c.tool())).filter(t -> t != null).toList();
    for (Object e : events) {
      JsonObject event = (JsonObject) e;
      JsonArray offered = new JsonArray();
      for (NamedTool reaction : reactions) {
        offered.add(new JsonObject().put("tool", reaction.name()).put("causation_token", token(request, event, reaction)));
      }
      event.put("reactions", offered);
    }
    if (context.isEmpty()) {
      return Future.succeededFuture(reply);
    }
    return CallerSessions.readOnlySnapshot(callers.forCaller(request.caller()), request, config.database().statementTimeoutMs(),
        conn -> {
          Future<Void> chain = Future.succeededFuture();
          for (Object e : events) {
            JsonObject event = (JsonObject) e;
            JsonObject read = new JsonObject();
            event.put("context", read);
            for (NamedCatalog.Context ctx : declared.context()) {
              NamedTool tool = catalog.tool(ctx.tool());
              if (tool != null) {
                chain = chain.compose(v -> one(conn, request, tool, ctx, row(event)).map(out -> {
                  read.put(tool.name(), out);
                  return null;
                }));
              }
            }
          }
          return chain;
        }).map(done -> reply);
  }

  /** The caller may change data with {@code tool} now: its role sees it, its token may write, and its scopes cover writing. */
  private static boolean mayChange(Caller caller, NamedTool tool) {
    return tool.visibleTo(caller) && caller.access() == Access.READ_WRITE && caller.hasScope(OAuthConfig.WRITE_SCOPE);
  }

  private String token(ToolRequest request, JsonObject event, NamedTool reaction) {
    JsonObject claims = new JsonObject().put("c", request.arguments().getString("consumer")).put("e", event.getString("event_id"))
        .put("l", event.getString("lease_token")).put("t", reaction.name());
    return keys.ring().seal(NamedTool.CAUSATION_PURPOSE, request.caller().id(), claims.encode().getBytes(StandardCharsets.UTF_8));
  }

  /** The event's row: its after image, or its before image for a delete. */
  private static JsonObject row(JsonObject event) {
    JsonObject change = event.getJsonObject("change", new JsonObject());
    return change.getValue("after") instanceof JsonObject after ? after
        : change.getValue("before") instanceof JsonObject before ? before : new JsonObject();
  }

  /**
   * One context read, as a named read tool runs its statement (the read guard and the function
   * check), its first page of at most the tool's limit; a read that fails is that context's error,
   * rolled back to before it, and the others still run.
   */
  private Future<JsonObject> one(SqlConnection conn, ToolRequest request, NamedTool tool, NamedCatalog.Context ctx, JsonObject row) {
    JsonObject args = new JsonObject();
    tool.parameters().stream().filter(p -> !p.bound()).forEach(p -> args.put(p.name(), row.getValue(ctx.column(p.name()))));
    JsonArray params;
    try {
      params = tool.bind(args, request.caller());
    } catch (ToolException e) {
      return Future.succeededFuture(new JsonObject().put("error", e.toJson()));
    }
    return conn.query("SAVEPOINT tidemark_context").execute()
        .compose(v -> ReadGuard.check(conn, functions, tool.statement(), params, false))
        .compose(checked -> checked.statement().cursor(checked.params()).read(tool.limit() + 1))
        .map(rows -> {
          JsonArray out = new JsonArray();
          boolean more = false;
          for (Row r : rows) {
            if (out.size() == tool.limit()) {
              more = true;
              break;
            }
            out.add(PgJson.row(r, r.size()));
          }
          JsonObject page = new JsonObject().put("rows", out);
          return more ? page.put("truncated", true) : page;
        })
        .recover(err -> conn.query("ROLLBACK TO SAVEPOINT tidemark_context").execute().transform(x -> Future.succeededFuture(
            new JsonObject().put("error", ((ToolException) tool.blame(SqlErrors.toToolException(err, "sql"))).toJson()))));
  }
}
