package dev.tidemark.node.dev;

import dev.tidemark.auth.TokenStore;
import dev.tidemark.contract.Access;
import dev.tidemark.database.schema.DatabaseSetup;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import java.util.List;
import java.util.Map;

/**
 * Prepares the dev database: what {@link DatabaseSetup} makes (the schema, the callers' logins,
 * the demo tables on first run), and a token for each of the two callers.
 */
public final class DevSetup {

  public static final String WRITER_ROLE = DatabaseSetup.WRITER_ROLE;
  public static final String READER_ROLE = DatabaseSetup.READER_ROLE;

  private DevSetup() {}

  /**
   * The demo database's named tools (schema/demo/tools.yaml of the database module), as the config
   * keys that define them: dev mode serves them on its demo database.
   */
  public static Map<dev.tidemark.config.ConfigKey, String> demoTools() {
    io.vertx.core.json.JsonObject section = dev.tidemark.node.tools.NamedToolsLoader.parse(
        io.vertx.core.buffer.Buffer.buffer(dev.tidemark.database.schema.Migrator.read("demo/tools.yaml")));
    return Map.of(dev.tidemark.config.ConfigKey.DATABASE_TOOLS, section.getJsonArray("tools").encode(),
        dev.tidemark.config.ConfigKey.DATABASE_TOOLSETS, section.getJsonObject("toolsets").encode(),
        dev.tidemark.config.ConfigKey.DATABASE_CONSUMERS, section.getJsonArray("consumers").encode());
  }

  /** @param callerPasswords the login password of {@link #WRITER_ROLE} and {@link #READER_ROLE} */
  public static Future<Void> prepare(Pool pool, String readWriteToken, String readOnlyToken, Map<String, String> callerPasswords) {
    return prepare(pool, readWriteToken, readOnlyToken, callerPasswords, true);
  }

  /** @param demo whether to create the demo tables (dev mode against an existing database only when asked) */
  public static Future<Void> prepare(Pool pool, String readWriteToken, String readOnlyToken, Map<String, String> callerPasswords,
      boolean demo) {
    TokenStore tokens = TokenStore.create(pool);
    return DatabaseSetup.prepare(pool, callerPasswords, demo)
        .compose(x -> tokens.put("dev-read-write", readWriteToken, WRITER_ROLE, Access.READ_WRITE, List.of("*")))
        .compose(x -> tokens.put("dev-read-only", readOnlyToken, READER_ROLE, Access.READ_ONLY, List.of("*")))
        .mapEmpty();
  }
}
