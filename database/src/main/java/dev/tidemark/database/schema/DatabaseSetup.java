package dev.tidemark.database.schema;

import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.Map;
import org.postgresql.util.PasswordUtil;

/**
 * Makes a database ready for dev mode and for the integration tests of every module: Tidemark's
 * schema, the logins of the two caller roles, and the demo tables when asked. Tokens are the
 * gateway's business and are added by whoever runs one.
 */
public final class DatabaseSetup {

  public static final String WRITER_ROLE = "tidemark_writer";
  public static final String READER_ROLE = "tidemark_reader";

  private DatabaseSetup() {}

  /**
   * @param callerPasswords the login password of {@link #WRITER_ROLE} and {@link #READER_ROLE}
   *     (caller statements run under those logins, never under the login that does this setup)
   * @param demo whether to create the demo tables (those that exist already are left as they are)
   */
  public static Future<Void> prepare(Pool pool, Map<String, String> callerPasswords, boolean demo) {
    return Migrator.migrate(pool)
        .compose(x -> login(pool, WRITER_ROLE, callerPasswords.get(WRITER_ROLE)))
        .compose(x -> login(pool, READER_ROLE, callerPasswords.get(READER_ROLE)))
        .compose(x -> demo ? demo(pool) : Future.succeededFuture())
        .mapEmpty();
  }

  private static Future<Void> demo(Pool pool) {
    return pool.query("SELECT to_regclass('public.customers') IS NOT NULL").execute()
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? Future.succeededFuture()
            : pool.query(Migrator.read("demo/demo.sql")).execute().mapEmpty())
        .compose(x -> pool.query("SELECT to_regclass('public.agent_notes') IS NOT NULL").execute())
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? Future.succeededFuture()
            : pool.query(Migrator.read("demo/policies.sql")).execute().mapEmpty())
        .mapEmpty();
  }

  /**
   * Lets a caller role log in with {@code password}, and takes away every attribute that would
   * reach past its grants. Only attributes the role has are named: PostgreSQL lets only a superuser
   * name SUPERUSER, REPLICATION or BYPASSRLS in ALTER ROLE, even to take them away, and dev mode
   * runs on a login with CREATEROLE alone. The password goes as a SCRAM-SHA-256 verifier, never as
   * itself: PostgreSQL writes a failed statement to its log.
   */
  static Future<Void> login(Pool pool, String role, String password) {
    if (password == null) {
      return Future.failedFuture(new IllegalArgumentException("no login password given for " + role));
    }
    String verifier = PasswordUtil.encodeScramSha256(password.toCharArray());
    return pool.preparedQuery(LOGIN_SQL).execute(Tuple.of(role, verifier))
        .compose(rows -> rows.size() == 0
            ? Future.failedFuture(new IllegalStateException("the role " + role + " does not exist: tidemark migrate creates it"))
            : pool.query(rows.iterator().next().getString(0)).execute())
        .mapEmpty();
  }

  private static final String LOGIN_SQL = """
      SELECT format('ALTER ROLE %I LOGIN', r.rolname)
             || CASE WHEN r.rolsuper THEN ' NOSUPERUSER' ELSE '' END
             || CASE WHEN r.rolcreaterole THEN ' NOCREATEROLE' ELSE '' END
             || CASE WHEN r.rolcreatedb THEN ' NOCREATEDB' ELSE '' END
             || CASE WHEN r.rolreplication THEN ' NOREPLICATION' ELSE '' END
             || CASE WHEN r.rolbypassrls THEN ' NOBYPASSRLS' ELSE '' END
             || format(' PASSWORD %L', $2::text)
        FROM pg_roles r
       WHERE r.rolname = $1""";
}
