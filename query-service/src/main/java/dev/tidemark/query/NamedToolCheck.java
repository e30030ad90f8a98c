package dev.tidemark.query;

import dev.tidemark.database.SqlStates;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.NamedTypes;
import dev.tidemark.database.FunctionGuard;
import dev.tidemark.database.StatementGuard;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.pgclient.PgConnection;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PreparedStatement;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The check of a named tool's statement when the tools are loaded, asked of PostgreSQL itself,
 * never of a pattern over the text: as each role that sees the tool, on a connection that logged
 * in as that role, in a READ ONLY transaction that is rolled back, the statement is parsed alone
 * (the extended protocol's Parse takes exactly one), its placeholders' types are read back and set
 * against the parameters, and it is planned with EXPLAIN, which never runs it: a plan with a
 * ModifyTable node is a change, one without is a read, a utility statement cannot be planned. The
 * function check then judges what the plan reaches, as for query and execute. Declared result
 * columns are compared with what the statement returns, read from a wrapper that returns no row.
 */
public final class NamedToolCheck {

  /** How the fault of a tool that could not be checked at all begins: its node checks it again later. */
  public static final String UNREACHABLE = "the database could not be asked: ";

  /**
   * How long the check waits for a lock of a table its statement names (DDL, such as the capture
   * setting a new table up, holds them): past it the tool is checked again later, as when the
   * database cannot be reached.
   */
  static final long LOCK_TIMEOUT_MS = 2_000;

  /** What the check found in the role's transaction: a fault, or what the function check must judge. */
  private record Checked(String fault, FunctionGuard.Reach reach) {

    static Checked fault(String fault) {
      return new Checked(fault, null);
    }
  }

  private NamedToolCheck() {}

  /**
   * What PostgreSQL refuses of {@code tools}: a tool's name to its first fault, absent when it
   * passed. Never fails: a role that cannot log in is a fault of each tool that names it.
   *
   * @param own Tidemark's own login on the database: which roles exist, and the function check
   */
  public static Future<Map<String, String>> check(Vertx vertx, DatabaseConfig db, Pool own, List<NamedTool> tools) {
    Map<String, String> refused = new LinkedHashMap<>();
    Set<String> roles = new LinkedHashSet<>();
    tools.forEach(t -> roles.addAll(t.roles()));
    if (tools.isEmpty()) {
      return Future.succeededFuture(refused);
    }
    FunctionGuard functions = new FunctionGuard(own, db.reviewedFunctions(), 0);
    return own.preparedQuery("SELECT rolname::text AS name FROM pg_roles WHERE rolname = ANY($1)")
        .execute(Tuple.of(roles.toArray(new String[0])))
        .map(rows -> {
          Set<String> existing = new LinkedHashSet<>();
          rows.forEach(r -> existing.add(r.getString("name")));
          return existing;
        })
        .compose(existing -> {
          Future<Void> chain = Future.succeededFuture();
          for (String role : roles) {
            List<NamedTool> theirs = tools.stream().filter(t -> t.roles().contains(role)).toList();
            chain = chain.compose(v -> asRole(vertx, db, functions, role, existing.contains(role), theirs, refused));
          }
          return chain;
        })
        .recover(err -> {
          tools.forEach(t -> refused.putIfAbsent(t.name(), UNREACHABLE + err.getMessage()));
          return Future.succeededFuture();
        })
        .map(v -> refused);
  }

  private static Future<Void> asRole(Vertx vertx, DatabaseConfig db, FunctionGuard functions, String role, boolean exists,
      List<NamedTool> tools, Map<String, String> refused) {
    String password = db.callerPassword(role);
    String unknown = !exists ? "names the role " + role + ", which does not exist in PostgreSQL"
        : password == null ? "names the role " + role + ", for which Tidemark has no login (give it one in database.caller-passwords"
            + " or database.caller-password-dir)" : null;
    if (unknown != null) {
      tools.forEach(t -> refused.putIfAbsent(t.name(), unknown));
      return Future.succeededFuture();
    }
    return PgConnection.connect(vertx, db.connectOptions(role, password, "tidemark-check"))
        .compose(conn -> {
          Future<Void> chain = Future.succeededFuture();
          for (NamedTool tool : tools) {
            chain = chain.compose(v -> refused.containsKey(tool.name()) ? Future.succeededFuture()
                : inTransaction(conn, db, tc -> one(tc, tool))
                    // the function check reads the catalog on Tidemark's own pool, once the role's transaction ended: waiting
                    // for a connection of that pool while holding the statement's locks could wait on DDL that waits on them
                    .compose(checked -> checked.fault() != null ? Future.succeededFuture(checked.fault())
                        : functions.check(checked.reach(), ErrorCode.INVALID_ARGUMENTS, "statement").map((String) null)
                            .recover(err -> Future.succeededFuture("the function check refuses the statement: " + message(err))))
                    .recover(err -> Future.succeededFuture(SqlStates.is(err, SqlStates.LOCK_NOT_AVAILABLE)
                        ? UNREACHABLE + "a lock on a table the statement names was held longer than " + LOCK_TIMEOUT_MS + " ms"
                        : "PostgreSQL refuses it: " + message(err)))
                    .map(fault -> {
                      if (fault != null) {
                        refused.put(tool.name(), "as role " + role + ", " + fault);
                      }
                      return null;
                    }));
          }
          return chain.eventually(conn::close);
        }, err -> {
          tools.forEach(t -> refused.putIfAbsent(t.name(), "the role " + role + " cannot log in: " + err.getMessage()));
          return Future.succeededFuture();
        });
  }

  /** Runs {@code work} in a READ ONLY transaction that is always rolled back, bounded by the statement timeout. */
  private static <T> Future<T> inTransaction(SqlConnection conn, DatabaseConfig db, java.util.function.Function<SqlConnection, Future<T>> work) {
    return conn.query("BEGIN READ ONLY").execute()
        .compose(v -> conn.query("SET LOCAL statement_timeout = " + db.statementTimeoutMs() + "; SET LOCAL lock_timeout = "
            + LOCK_TIMEOUT_MS).execute())
        .compose(v -> work.apply(conn))
        .eventually(() -> conn.query("ROLLBACK").execute());
  }

  /** The fault of one tool's statement, or what its plan reaches. */
  private static Future<Checked> one(SqlConnection conn, NamedTool tool) {
    String sql = tool.statement();
    return conn.prepare(sql).transform(parsed -> {
      if (parsed.failed()) {
        Throwable err = parsed.cause();
        if (SqlStates.is(err, SqlStates.LOCK_NOT_AVAILABLE)) {
          return Future.failedFuture(err);
        }
        return Future.succeededFuture(Checked.fault(StatementGuard.severalStatements(err)
            ? "the statement holds several statements; a tool runs exactly one"
            : err instanceof PgException pg && SqlStates.is(err, SqlStates.SYNTAX_ERROR)
                ? "the statement does not parse: " + pg.getErrorMessage()
                : "PostgreSQL refuses the statement: " + message(err)));
      }
      PreparedStatement ps = parsed.result();
      return conn.preparedQuery(StatementGuard.PARAM_TYPES_SQL).execute(Tuple.of(sql)).compose(rows -> {
        String[] types = rows.size() == 0 ? null : rows.iterator().next().getArrayOfStrings("types");
        String[] inferred = types == null ? new String[0] : types;
        String fault = placeholders(tool, inferred);
        if (fault != null) {
          return Future.succeededFuture(Checked.fault(fault));
        }
        Tuple nulls = Tuple.tuple();
        for (int i = 0; i < inferred.length; i++) {
          nulls.addValue(null);
        }
        return conn.preparedQuery(StatementGuard.EXPLAIN + sql).execute(nulls).transform(planned -> {
          if (planned.failed()) {
            if (SqlStates.is(planned.cause(), SqlStates.LOCK_NOT_AVAILABLE)) {
              return Future.failedFuture(planned.cause());
            }
            return Future.succeededFuture(Checked.fault(StatementGuard.notPlannable(planned.cause())
                ? "the statement is a utility statement (such as SET, DO, CALL, COPY, LOCK, DDL or transaction control), which no tool"
                    + " may run"
                : "PostgreSQL refuses to plan the statement: " + message(planned.cause())));
          }
          JsonArray all = (JsonArray) planned.result().iterator().next().getValue(0);
          StatementGuard.Shape shape = StatementGuard.shape(all.getJsonObject(0).getJsonObject("Plan"));
          String kindFault = kind(tool, shape);
          if (kindFault != null) {
            return Future.succeededFuture(Checked.fault(kindFault));
          }
          FunctionGuard.Reach reach = FunctionGuard.Reach.of(all, inferred);
          return columns(conn, tool, nulls).map(columnsFault -> new Checked(columnsFault, reach));
        });
      }).eventually(ps::close);
    });
  }

  /** Every placeholder a parameter, every parameter a placeholder, and each value bindable to its placeholder's type. */
  static String placeholders(NamedTool tool, String[] inferred) {
    List<NamedTool.Parameter> params = tool.parameters();
    if (inferred.length > params.size()) {
      return "the statement's placeholder $" + (params.size() + 1) + " has no parameter (the tool declares " + params.size()
          + "; the i-th parameter is $i)";
    }
    if (inferred.length < params.size()) {
      return "parameter " + params.get(inferred.length).name() + " has no placeholder $" + (inferred.length + 1)
          + " in the statement (the i-th parameter is $i)";
    }
    for (int i = 0; i < inferred.length; i++) {
      NamedTool.Parameter p = params.get(i);
      if (!NamedTypes.binds(p.type(), inferred[i])) {
        return "parameter " + p.name() + " is declared " + p.type() + ", but PostgreSQL takes $" + (i + 1) + " as " + inferred[i]
            + "; declare the type PostgreSQL takes, or cast the placeholder in the statement ($" + (i + 1) + "::" + p.type() + ")";
      }
    }
    return null;
  }

  static String kind(NamedTool tool, StatementGuard.Shape shape) {
    if (shape.relations().stream().anyMatch(r -> r.startsWith("tidemark."))) {
      return "the statement touches Tidemark's own tables, which are never served";
    }
    if (tool.kind() == NamedTool.Kind.READ) {
      if (shape.writes()) {
        return "the tool's kind is read, but its statement writes (PostgreSQL plans an INSERT, UPDATE, DELETE or MERGE); make it a"
            + " change tool, or make the statement a plain read";
      }
      if (shape.locks()) {
        return "the tool's kind is read, but its statement locks rows (FOR UPDATE or FOR SHARE); reads never lock";
      }
      return null;
    }
    return shape.writes() ? null : "the tool's kind is change, but its statement changes no table (PostgreSQL plans no INSERT,"
        + " UPDATE, DELETE or MERGE); make it a read tool";
  }

  /** A read tool that declares columns: the names the statement returns, in order, must be those. */
  private static Future<String> columns(SqlConnection conn, NamedTool tool, Tuple nulls) {
    if (tool.columns().isEmpty()) {
      return Future.succeededFuture(null);
    }
    // LIMIT 0: PostgreSQL describes the rows and reads none
    return conn.preparedQuery("SELECT * FROM (" + tool.statement() + "\n) AS tidemark_columns LIMIT 0").execute(nulls).map(rows -> {
      List<String> returned = rows.columnsNames() == null ? List.of() : rows.columnsNames();
      List<String> declared = new ArrayList<>();
      tool.columns().forEach(c -> declared.add(c.name()));
      return returned.equals(declared) ? null
          : "the statement returns the columns " + returned + ", but the tool declares " + declared;
    });
  }

  private static String message(Throwable err) {
    return err instanceof PgException pg ? pg.getErrorMessage() : String.valueOf(err.getMessage());
  }
}
