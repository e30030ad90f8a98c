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
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
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

  /**
   * The type of each column a statement returns, as PostgreSQL names it (16 or later keeps it in
   * {@code pg_prepared_statements.result_types}; 15 does not, and the row then has no types): read
   * only when the client cannot name a column's type itself, which it can for the built-in ones.
   */
  static final String RESULT_TYPES_SQL = """
      SELECT ARRAY(SELECT t FROM jsonb_array_elements_text(to_jsonb(p) -> 'result_types') WITH ORDINALITY AS e(t, n) ORDER BY n) AS types
        FROM pg_prepared_statements p WHERE NOT from_sql AND statement = $1::text ORDER BY prepare_time DESC LIMIT 1""";

  private final ParamTypeCache paramTypes;
  private final ParamTypeCache resultTypes;
  private final FunctionGuard functions;

  public QueryTool(DatabaseConfig database, ParamTypeCache paramTypes, ParamTypeCache resultTypes, FunctionGuard functions,
      CursorCodec cursors, StalenessCheck staleness) {
    this.database = database;
    this.paramTypes = paramTypes;
    this.resultTypes = resultTypes;
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
              .compose(descriptors -> {
                if (descriptors == null || descriptors.isEmpty()) {
                  return Future.failedFuture(ReadGuard.refuse("The statement returns no rows, so it is not a plain read."));
                }
                return typeNames(conn, request.caller().pgRole(), sql, descriptors).map(types -> new Described(descriptors, types));
              })
              .map(described -> {
            List<? extends ColumnDescriptor> descriptors = described.columns();
            String[] types = described.types();
            JsonArray columns = new JsonArray();
            // the text names each column with its type too: a host may show the model only the text,
            // and a page without rows has no names line at all
            StringBuilder typed = new StringBuilder("; columns:");
            for (int i = 0; i < descriptors.size(); i++) {
              String name = descriptors.get(i).name();
              columns.add(new JsonObject().put("name", name).put("type", types[i]));
              typed.append(i == 0 ? " " : ", ").append(name).append(' ').append(types[i]);
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

  /** The columns a statement returns, with each one's type name. */
  private record Described(List<? extends ColumnDescriptor> columns, String[] types) {}

  /**
   * Each column's type name: the client's for the built-in types (an array as {@code int4[]}); for
   * the others (an enum, a domain, a composite type) PostgreSQL's, read on the call's own connection
   * while the statement is still prepared there, and remembered by role and statement text (the
   * role's search path decides which type a name means and how it is written); "unknown" where
   * neither can name it (PostgreSQL 15, or a lookup that failed: the rows are already read).
   */
  private Future<String[]> typeNames(SqlConnection conn, String role, String sql, List<? extends ColumnDescriptor> descriptors) {
    String[] names = new String[descriptors.size()];
    boolean unnamed = false;
    for (int i = 0; i < names.length; i++) {
      names[i] = clientTypeName(descriptors.get(i).typeName());
      unnamed |= names[i] == null;
    }
    if (!unnamed) {
      return Future.succeededFuture(names);
    }
    String key = role + '\u0000' + sql;
    String[] known = resultTypes.get(key);
    Future<String[]> found = known != null ? Future.succeededFuture(known)
        : conn.preparedQuery(RESULT_TYPES_SQL).execute(Tuple.of(sql)).map(rows -> {
          String[] types = rows.size() == 0 ? null : rows.iterator().next().getArrayOfStrings("types");
          // none (PostgreSQL 15) is remembered too, so that such a statement costs no lookup a call
          String[] kept = types == null ? new String[0] : types;
          resultTypes.put(key, kept);
          return kept;
        }).otherwiseEmpty();
    return found.map(types -> {
      for (int i = 0; i < names.length; i++) {
        if (names[i] == null) {
          names[i] = types != null && types.length == names.length && types[i] != null ? types[i] : "unknown";
        }
      }
      return names;
    });
  }

  /** The client's name of a type, as PostgreSQL writes it ({@code int4[]} for its INT4_ARRAY); null for one it does not know. */
  static String clientTypeName(String type) {
    if (type == null || type.equalsIgnoreCase("unknown") || type.equalsIgnoreCase("unknown_array")) {
      return null;
    }
    String lower = type.toLowerCase(java.util.Locale.ROOT);
    return lower.endsWith("_array") ? lower.substring(0, lower.length() - "_array".length()) + "[]" : lower;
  }
}
