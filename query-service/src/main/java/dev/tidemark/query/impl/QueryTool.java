package dev.tidemark.query.impl;

import dev.tidemark.database.SqlStates;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.ParamTypeCache;
import dev.tidemark.database.CallerSessions;
import dev.tidemark.database.CallerPools.CallerDb;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.query.StalenessCheck;
import dev.tidemark.database.PgJson;
import dev.tidemark.query.ReadTool;
import dev.tidemark.database.SqlErrors;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import io.vertx.sqlclient.Cursor;
import io.vertx.sqlclient.desc.ColumnDescriptor;
import java.util.List;

/**
 * {@code query}: one statement that {@link ReadGuard} accepts, a page at a time. Pages are taken
 * by position from a portal over the statement (skip {@code offset} rows, then read until the page
 * is full by rows or by bytes, a few rows at a time: see {@link Portals}), so the statement text runs exactly as written: wrapping it in LIMIT/OFFSET would change what
 * PostgreSQL classifies. The cursor carries fingerprints of the statement and its params, the
 * offset, the tables the plan reads and the change position of the first page.
 */
public final class QueryTool implements ReadTool {

  static final String KIND = "q";

  private final DatabaseConfig database;
  private final CursorCodec cursors;
  private final StalenessCheck staleness;

  private final ParamTypeCache paramTypes;
  private final FunctionGuard functions;

  public QueryTool(DatabaseConfig database, ParamTypeCache paramTypes, FunctionGuard functions, CursorCodec cursors,
      StalenessCheck staleness) {
    this.database = database;
    this.paramTypes = paramTypes;
    this.functions = functions;
    this.cursors = cursors;
    this.staleness = staleness;
  }

  @Override
  public Future<ToolReply> run(CallerDb db, ToolRequest request) {
    JsonObject args = request.arguments();
    String sql = args.getString("sql");
    JsonArray params = args.getJsonArray("params", new JsonArray());
    int limit = args.getInteger("limit", Limits.DEFAULT_ROWS);
    int maxBytes = Limits.resultBytes(args);
    String sqlFp = CursorCodec.fingerprint(sql);
    String paramsFp = CursorCodec.fingerprint(params.encode());
    JsonObject cursor;
    try {
      cursor = args.getString("cursor") == null ? null : cursors.decode(args.getString("cursor"), KIND, request.caller().id());
    } catch (ToolException e) {
      return Future.failedFuture(e);
    }
    if (cursor != null && (!sqlFp.equals(cursor.getString("s")) || !paramsFp.equals(cursor.getString("p")))) {
      return Future.failedFuture(new ToolException(ErrorCode.INVALID_CURSOR,
          "The cursor belongs to another statement or other params; send the same sql and params, or start again without a cursor.",
          new JsonObject().put("argument", "cursor")));
    }
    long offset = cursor == null ? 0 : cursor.getLong("o", 0L);
    Future<String> position = cursor == null ? staleness.position() : ReadTool.checkFresh(staleness, cursor);
    return position.compose(pos -> {
      String[] known = paramTypes.get(sql);
      Future<ToolReply> page = page(db, request, sql, params, limit, maxBytes, sqlFp, paramsFp, cursor, offset, pos, known);
      return known == null ? page : page.recover(err -> {
        if (!mayBeStaleTypes(err)) {
          return Future.failedFuture(err);
        }
        paramTypes.drop(sql);
        return page(db, request, sql, params, limit, maxBytes, sqlFp, paramsFp, cursor, offset, pos, null);
      });
    }).recover(err -> Future.failedFuture(SqlErrors.toToolException(err, "sql")));
  }

  /**
   * Whether a check with remembered parameter types may have failed because they went stale: a
   * value that did not convert, a count or type that PostgreSQL or its client refused. A refusal
   * by the guard, a timeout or a cancellation is final.
   */
  private static boolean mayBeStaleTypes(Throwable err) {
    if (err instanceof ToolException te) {
      return te.code() == ErrorCode.INVALID_ARGUMENTS;
    }
    if (err instanceof PgException) {
      return SqlStates.inClass(err, SqlStates.SYNTAX_ERROR_OR_ACCESS_RULE) || SqlStates.inClass(err, SqlStates.DATA_EXCEPTION);
    }
    return err instanceof VertxException && !(err instanceof ClosedConnectionException);
  }

  private Future<ToolReply> page(CallerDb db, ToolRequest request, String sql, JsonArray params, int limit, int maxBytes, String sqlFp,
      String paramsFp, JsonObject cursor, long offset, String pos, String[] knownTypes) {
    return CallerSessions.readOnly(db, request, database.statementTimeoutMs(),
        conn -> ReadGuard.check(conn, functions, sql, params, knownTypes, request.caller().access() == Access.READ_WRITE).compose(checked -> {
          paramTypes.put(sql, checked.types());
          Cursor portal = checked.statement().cursor(checked.params());
          Page.Builder builder = new Page.Builder(limit, maxBytes, "max_bytes");
          return Portals.skip(portal, offset, maxBytes)
              .compose(v -> Portals.fill(portal, builder, r -> builder.offer(PgJson.row(r, r.size()))))
              .map(descriptors -> {
            if (descriptors == null || descriptors.isEmpty()) {
              throw ReadGuard.refuse("The statement returns no rows, so it is not a plain read.");
            }
            JsonArray columns = new JsonArray();
            // the text names each column with its type too: a host may show the model only the text,
            // and a page without rows has no names line at all
            StringBuilder typed = new StringBuilder("; columns:");
            for (ColumnDescriptor c : descriptors) {
              String type = c.typeName() == null ? "unknown" : c.typeName().toLowerCase();
              columns.add(new JsonObject().put("name", c.name()).put("type", type));
              typed.append(columns.size() == 1 ? " " : ", ").append(c.name()).append(' ').append(type);
            }
            Page page = builder.build();
            String next = page.more() ? cursors.encode(new JsonObject()
                .put("k", KIND).put("s", sqlFp).put("p", paramsFp)
                .put("o", offset + page.rows().size())
                .put("t", new JsonArray(List.copyOf(checked.tables())))
                .put("pos", pos)
                .put("iat", cursor == null ? System.currentTimeMillis() : cursor.getLong("iat")), request.caller().id()) : null;
            JsonObject out = page.into(new JsonObject().put("columns", columns), next);
            return ToolReply.ok("query: " + page.describe(offset > 0 ? " after the first " + offset : "", next) + typed, out, page.rows());
          });
        }));
  }


}
