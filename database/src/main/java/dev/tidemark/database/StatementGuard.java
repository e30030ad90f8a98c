package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What the read guard of {@code query} and {@code explain} and the write guard of {@code execute}
 * and {@code transaction} share: PostgreSQL, never a pattern over the text, says what a statement
 * is. The statement is parsed alone through the extended protocol (whose Parse accepts exactly one
 * statement), its parameter types are read back from the session, and it is planned with
 * {@link #EXPLAIN}, which never runs it. Each guard then applies its own rule to the plan's
 * {@link Shape}; both refuse Tidemark's own tables and hand the plan to {@link FunctionGuard}.
 */
public final class StatementGuard {

  /** Plans a statement without running it; utility statements cannot be explained (SQLSTATE 42601). */
  public static final String EXPLAIN = "EXPLAIN (FORMAT JSON, VERBOSE) ";

  /** The parameter types PostgreSQL inferred for the statement just parsed on this session. */
  public static final String PARAM_TYPES_SQL = """
      SELECT parameter_types::text[] AS types FROM pg_prepared_statements
       WHERE NOT from_sql AND statement = $1::text ORDER BY prepare_time DESC LIMIT 1""";

  private StatementGuard() {}

  /** The node types of a plan, depth first, and the relations (schema.name) it touches. */
  public record Shape(List<String> nodes, Set<String> relations) {

    /** INSERT, UPDATE, DELETE or MERGE, also inside a WITH. */
    public boolean writes() {
      return nodes.contains("ModifyTable");
    }

    /** FOR UPDATE or FOR SHARE. */
    public boolean locks() {
      return nodes.contains("LockRows");
    }

    /** NOT_FOUND naming {@code argument} when the statement touches one of Tidemark's own tables, which are never served. */
    public void refuseOwnTables(String argument) {
      for (String relation : relations) {
        if (relation.startsWith(TableCatalog.OWN_SCHEMA + ".")) {
          throw new ToolException(ErrorCode.NOT_FOUND, "Tidemark's own tables are not served. " + ErrorCode.NOT_FOUND.hint(),
              new JsonObject().put("argument", argument));
        }
      }
    }
  }

  /** The shape of {@code plan}, the "Plan" object of an EXPLAIN (FORMAT JSON) answer. */
  public static Shape shape(JsonObject plan) {
    List<String> nodes = new ArrayList<>();
    Set<String> relations = new LinkedHashSet<>();
    walk(plan, nodes, relations);
    return new Shape(nodes, relations);
  }

  private static void walk(JsonObject node, List<String> nodes, Set<String> relations) {
    if (node == null) {
      return;
    }
    nodes.add(node.getString("Node Type"));
    String relation = node.getString("Relation Name");
    if (relation != null) {
      relations.add(node.getString("Schema", "") + "." + relation);
    }
    JsonArray children = node.getJsonArray("Plans");
    if (children != null) {
      for (Object child : children) {
        walk((JsonObject) child, nodes, relations);
      }
    }
  }

  /** The extended protocol's Parse refuses a string of several statements from exec_parse_message. */
  public static boolean severalStatements(Throwable err) {
    return err instanceof PgException pg && SqlStates.is(err, SqlStates.SYNTAX_ERROR) && "exec_parse_message".equals(pg.getRoutine());
  }

  /** PostgreSQL refused to plan the statement: a utility statement, or text that does not parse as one that can be planned. */
  public static boolean notPlannable(Throwable err) {
    return SqlStates.is(err, SqlStates.SYNTAX_ERROR);
  }
}
