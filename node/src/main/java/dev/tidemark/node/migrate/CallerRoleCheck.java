package dev.tidemark.node.migrate;

import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.Pools;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Refuses a setup in which a caller role could reach past its grants: PostgreSQL keeps a caller
 * inside its role only when the role itself holds nothing that bypasses grants and policies. Each
 * problem is one line that names the role and the statement that fixes it. See docs/security.md.
 */
public final class CallerRoleCheck {

  /** Built-in roles whose members read or write files, run programs, signal backends or bypass grants. */
  static final List<String> DANGEROUS_MEMBERSHIPS = List.of("pg_read_server_files", "pg_write_server_files",
      "pg_execute_server_program", "pg_signal_backend", "pg_read_all_data", "pg_write_all_data");

  private static final String TOKEN_ROLES = """
      SELECT coalesce(array_agg(DISTINCT pg_role), '{}') FROM tidemark.api_token WHERE revoked_at IS NULL""";

  /**
   * A caller role reaches what every role it is a member of has: its session user is the caller's
   * role, and PostgreSQL lets it take on any of them (and inheriting members own what they own).
   */
  private static final String ROLES = """
      SELECT r.rolname,
             ARRAY(SELECT m.rolname::text FROM pg_roles m WHERE pg_has_role(r.oid, m.oid, 'MEMBER') AND m.rolsuper ORDER BY 1) AS super,
             ARRAY(SELECT m.rolname::text FROM pg_roles m WHERE pg_has_role(r.oid, m.oid, 'MEMBER') AND m.rolbypassrls ORDER BY 1) AS bypass,
             ARRAY(SELECT m.rolname::text FROM pg_roles m WHERE pg_has_role(r.oid, m.oid, 'MEMBER') AND m.rolcreaterole ORDER BY 1) AS creator,
             ARRAY(SELECT m.rolname::text FROM pg_roles m WHERE pg_has_role(r.oid, m.oid, 'MEMBER') AND m.rolreplication ORDER BY 1) AS repl,
             ARRAY(SELECT b.rolname::text FROM pg_roles b
                    WHERE b.rolname = ANY($3) AND pg_has_role(r.oid, b.oid, 'MEMBER') ORDER BY 1) AS dangerous,
             r.rolname = $2 OR coalesce(pg_has_role(r.oid, (SELECT l.oid FROM pg_roles l WHERE l.rolname = $2), 'MEMBER'), false)
               AS reaches_login,
             ARRAY(SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) || ' (owned by ' || o.rolname || ')' FROM pg_class c
                     JOIN pg_namespace n ON n.oid = c.relnamespace
                     JOIN pg_roles o ON o.oid = c.relowner
                    WHERE pg_has_role(r.oid, c.relowner, 'MEMBER') AND c.relrowsecurity AND NOT c.relforcerowsecurity
                      AND n.nspname = ANY($4)
                    ORDER BY 1) AS unforced
        FROM pg_roles r WHERE r.rolname = ANY($1) ORDER BY r.rolname""";

  private CallerRoleCheck() {}

  /**
   * @param configured the roles that have a login in the config (database.caller-passwords)
   * @param login Tidemark's own login (database.user)
   * @param schemas the served schemas
   * @return one line per problem; empty when every caller role is safe
   */
  public static Future<List<String>> problems(Pool pool, Set<String> configured, String login, List<String> schemas) {
    return pool.query("SELECT to_regclass('tidemark.api_token') IS NOT NULL").execute()
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? pool.query(TOKEN_ROLES).execute().map(r -> List.of(r.iterator().next().getArrayOfStrings(0)))
            : Future.succeededFuture(List.<String>of()))
        .compose(tokenRoles -> {
          Set<String> roles = new TreeSet<>(configured);
          roles.addAll(tokenRoles);
          return pool.preparedQuery(ROLES).execute(Tuple.of(roles.toArray(new String[0]), login,
                  DANGEROUS_MEMBERSHIPS.toArray(new String[0]), schemas.toArray(new String[0])))
              .map(rows -> {
                List<String> problems = new ArrayList<>();
                Set<String> found = new TreeSet<>();
                for (Row r : rows) {
                  found.add(r.getString("rolname"));
                  problems.addAll(problemsOf(r));
                }
                for (String role : roles) {
                  if (!found.contains(role)) {
                    problems.add("caller role " + role + " does not exist: create it (CREATE ROLE " + quote(role)
                        + " LOGIN PASSWORD '...') or revoke the tokens that name it");
                  }
                }
                return problems;
              });
        });
  }

  /**
   * Why a caller mapped to {@code role} would be refused every call on {@code db}, one sentence per cause with its fix;
   * empty when its statements can run: the role exists, may log in, has a password in the config, and PostgreSQL takes
   * that password; {@code nameDatabase} names {@code db} in each sentence, where several are served. A caller's statements run on connections that log in as its own role, so a role that cannot log in
   * leaves its tokens answering PERMISSION_DENIED to every call, {@code status} included.
   */
  public static Future<List<String>> loginProblems(Vertx vertx, io.vertx.sqlclient.SqlClient pool, DatabaseConfig db, String role, boolean nameDatabase) {
    String where = nameDatabase ? " (database " + db.name() + ")" : "";
    return pool.preparedQuery("SELECT rolcanlogin FROM pg_roles WHERE rolname = $1").execute(Tuple.of(role)).compose(rows -> {
      if (rows.size() == 0) {
        return Future.succeededFuture(List.of("role " + role + " does not exist" + where + ": create it as docs/security.md shows"
            + " (CREATE ROLE " + quote(role) + " LOGIN PASSWORD '...'), then put its password where database.caller-password-dir"
            + " points"));
      }
      List<String> out = new ArrayList<>();
      if (!Boolean.TRUE.equals(rows.iterator().next().getBoolean(0))) {
        out.add("role " + role + " cannot log in" + where + ", and every statement of a caller runs on a login of its own role:"
            + " run ALTER ROLE " + quote(role) + " LOGIN PASSWORD '...' as a superuser");
      }
      String password = db.callerPasswords().get(role);
      if (password == null) {
        out.add("no password is configured for role " + role + where + ": put it in a file named " + role
            + " in the folder database.caller-password-dir names (or in database.caller-passwords)");
      }
      if (!out.isEmpty()) {
        return Future.succeededFuture(out);
      }
      return PgConnection.connect(vertx, Pools.connectOptions(db).setUser(role).setPassword(password))
          .compose(c -> c.close().map(List.<String>of()))
          .recover(err -> Future.succeededFuture(List.of("role " + role + " cannot log in with its configured password" + where
              + " (" + err.getMessage() + "): put the password PostgreSQL holds for it in database.caller-password-dir, or set it"
              + " with ALTER ROLE " + quote(role) + " PASSWORD '...'")));
    });
  }

  private static List<String> problemsOf(Row r) {
    String role = r.getString("rolname");
    String q = quote(role);
    List<String> out = new ArrayList<>();
    if (r.getBoolean("reaches_login")) {
      out.add("caller role " + role + " is, or is a member of, Tidemark's own login: give callers a role of their own, or REVOKE"
          + " the login's role from " + q);
    }
    flag(out, role, r.getArrayOfStrings("super"), "a superuser, which no grant or policy holds", "NOSUPERUSER");
    flag(out, role, r.getArrayOfStrings("bypass"), "bypasses row-level security", "NOBYPASSRLS");
    flag(out, role, r.getArrayOfStrings("creator"), "may create and alter roles", "NOCREATEROLE");
    flag(out, role, r.getArrayOfStrings("repl"), "may create replication slots and stream the whole database", "NOREPLICATION");
    for (String member : r.getArrayOfStrings("dangerous")) {
      out.add("caller role " + role + " is a member of " + member + ": REVOKE " + member + " FROM " + q
          + " (or from the role " + role + " inherits it through)");
    }
    for (String table : r.getArrayOfStrings("unforced")) {
      String name = table.substring(0, table.lastIndexOf(" (owned by "));
      out.add("caller role " + role + " owns, or is a member of the owner of, " + table + ", whose row-level security does not apply"
          + " to its owner: ALTER TABLE " + name + " FORCE ROW LEVEL SECURITY, or give the table an owner the role is not a member of");
    }
    return out;
  }

  /** One line per role, the caller's own or one it is a member of, that carries the attribute. */
  private static void flag(List<String> out, String role, String[] holders, String what, String fix) {
    for (String holder : holders) {
      out.add(holder.equals(role)
          ? "caller role " + role + (what.startsWith("a ") ? " is " : " ") + what + ": ALTER ROLE " + quote(role) + " " + fix
          : "caller role " + role + " is a member of " + holder + ", which " + (what.startsWith("a ") ? "is " : "") + what
              + ", and may take it on: REVOKE " + quote(holder) + " FROM " + quote(role) + ", or ALTER ROLE " + quote(holder) + " " + fix);
    }
  }

  private static String quote(String name) {
    return name.matches("[a-z_][a-z0-9_]*") ? name : "\"" + name.replace("\"", "\"\"") + "\"";
  }
}
