package dev.tidemark.node.dev;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.contract.Access;
import dev.tidemark.node.migrate.Migrator;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.util.List;

/** Prepares the dev database: Tidemark's schema, the demo tables on first run, and the two callers. */
public final class DevSetup {

  public static final String WRITER_ROLE = "tidemark_writer";
  public static final String READER_ROLE = "tidemark_reader";

  private DevSetup() {}

  public static Future<Void> prepare(Pool pool, String readWriteToken, String readOnlyToken) {
    TokenStore tokens = TokenStore.create(pool);
    return Migrator.migrate(pool)
        .compose(x -> pool.query("SELECT to_regclass('public.customers') IS NOT NULL").execute())
        .compose(rows -> rows.iterator().next().getBoolean(0)
            ? Future.succeededFuture()
            : pool.query(Migrator.read("demo/demo.sql")).execute().mapEmpty())
        .compose(x -> tokens.put("dev-read-write", readWriteToken, WRITER_ROLE, Access.READ_WRITE, List.of("*")))
        .compose(x -> tokens.put("dev-read-only", readOnlyToken, READER_ROLE, Access.READ_ONLY, List.of("*")))
        .mapEmpty();
  }
}
