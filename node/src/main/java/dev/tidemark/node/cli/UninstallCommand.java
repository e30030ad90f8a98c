package dev.tidemark.node.cli;

import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.database.schema.ChangelogStore;
import dev.tidemark.database.Pools;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tidemark uninstall}: removes everything Tidemark put into the configured database, then exits. */
@Command(name = "uninstall", mixinStandardHelpOptions = true,
    description = "Removes Tidemark from the configured database: replication slot, publication, triggers, replica identities"
        + " it set, and schema tidemark (tokens, changelog, keys). Stop every node first. See docs/changelog.md.")
final class UninstallCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin
  DatabaseOptions options;

  @Option(names = "--yes", description = "Really remove it: without this flag nothing is changed.")
  boolean yes;

  @Option(names = "--database", paramLabel = "NAME", description = "The served database to remove Tidemark from; default: the default database.")
  String database;

  @Option(names = "--database-url", paramLabel = "URL", description = "The PostgreSQL to remove Tidemark from, as given to"
      + " 'tidemark dev --database-url' (postgresql://user:password@host:port/database); overrides the configured database.")
  String databaseUrl;

  /** The configuration with the database of {@code --database-url}, its login included, as dev mode takes it. */
  private TidemarkConfig fromUrl() {
    DevCommand.External external;
    try {
      external = new DevCommand.External(java.net.URI.create(databaseUrl));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--database-url: " + e.getMessage());
    }
    java.util.Map<ConfigKey, String> keys = new java.util.EnumMap<>(external.keys());
    keys.put(ConfigKey.DATABASE_PASSWORD_FILE, "");  // the URL's password, not a file's
    return ServeCommand.load(spec, options.config, null, keys);
  }

  @Override
  public Integer call() throws Exception {
    TidemarkConfig all = databaseUrl == null ? options.load() : fromUrl();
    // one database at a time: removing Tidemark is never done to every database by one command
    TidemarkConfig cfg = all.forDatabase(database == null ? all.defaultDatabase().name() : database);
    if (!yes) {
      spec.commandLine().getErr().println("tidemark uninstall: this deletes schema tidemark (tokens, changelog, keys) and the capture of"
          + " database " + cfg.database().dbname() + "; run it again with --yes to do so. Nothing was changed.");
      return 2;
    }
    try (CommandSession session = options.open(cfg.database())) {
      try {
        session.await(CaptureSetup.uninstall(session.pool()));
      } catch (CommandFailure | IllegalStateException e) {
        // a refusal of the uninstall itself (a slot in use, tables the login cannot undo) says what to do; nothing was removed
        spec.commandLine().getErr().println("tidemark uninstall: " + e.getMessage()
            + (String.valueOf(e.getMessage()).contains("is active") ? " (stop every Tidemark node first)" : ""));
        return 1;
      }
      String changelog = "";
      if (cfg.database().separateChangelog()) {
        // the changelog's own database holds nothing but Tidemark's changelog
        DatabaseConfig store = cfg.database().changelogDatabase();
        io.vertx.sqlclient.Pool pool = Pools.changelog(session.vertx(), cfg.database(), session.pool());
        try {
          session.await(ChangelogStore.uninstall(pool));
        } finally {
          session.await(pool.close());
        }
        changelog = " and its changelog from " + store.host() + ":" + store.port() + "/" + store.dbname();
      }
      spec.commandLine().getOut().println("Tidemark was removed from database " + cfg.database().dbname() + changelog
          + "; the caller roles tidemark_reader and tidemark_writer belong to the server and were left in place.");
      return 0;
    }
  }
}
