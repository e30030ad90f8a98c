package dev.tidemark.node.dev;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.contract.Access;
import dev.tidemark.node.migrate.Migrator;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.List;
import java.util.Map;

/**
 * Prepares the dev database: Tidemark's schema, the demo tables on first run, and the two callers,
 * whose roles log in with the given passwords (caller statements run under those logins, never
 * under the superuser that dev mode's own schema work uses).
 */
public final class DevSetup {

  public static final String WRITER_ROLE = "tidemark_writer";
  public static final String READER_ROLE = "tidemark_reader";

  private DevSetup() {}

  /** @param callerPasswords the login password of {@link #WRITER_ROLE} and {@link #READER_ROLE} */
  public static Future<Void> prepare(Pool pool, String readWriteToken, String readOnlyToken, Map<String, String> callerPasswords) {
    return prepare(pool, readWriteToken, readOnlyToken, callerPasswords, true);
  }

  /** @param demo whether to create the demo tables (dev mode against an existing database only when asked) */
  public static Future<Void> prepare(Pool pool, String readWriteToken, String readOnlyToken, Map<String, String> callerPasswords,
      boolean demo) {
    TokenStore tokens = TokenStore.create(pool);
    return Migrator.migrate(pool)
        .compose(x -> login(pool, WRITER_ROLE, callerPasswords.get(WRITER_ROLE)))
        .compose(x -> login(pool, READER_ROLE, callerPasswords.get(READER_ROLE)))
        .compose(x -> demo ? demo(pool) : Future.succeededFuture())
        .compose(x -> tokens.put("dev-read-write", readWriteToken, WRITER_ROLE, Access.READ_WRITE, List.of("*")))
        .compose(x -> tokens.put("dev-read-only", readOnlyToken, READER_ROLE, Access.READ_ONLY, List.of("*")))
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

  /** Lets a caller role log in with {@code password}, and takes away every attribute that would reach past its grants. */
  static Future<Void> login(Pool pool, String role, String password) {
    if (password == null) {
      return Future.failedFuture(new IllegalArgumentException("no login password given for " + role));
    }
    return pool.preparedQuery("SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS"
            + " PASSWORD %L', $1::text, $2::text)").execute(Tuple.of(role, password))
        .compose(rows -> pool.query(rows.iterator().next().getString(0)).execute())
        .mapEmpty();
  }
}
