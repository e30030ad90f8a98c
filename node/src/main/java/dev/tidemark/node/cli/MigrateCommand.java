package dev.tidemark.node.cli;

import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.node.migrate.CallerRoleCheck;
import dev.tidemark.database.schema.Migrator;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code tidemark migrate}: installs or upgrades Tidemark's own schema, then exits. */
@Command(name = "migrate", mixinStandardHelpOptions = true,
    description = "Installs or upgrades Tidemark's own schema in every configured database.")
final class MigrateCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file; docs/configuration.md lists its keys.")
  Path config;

  @Override
  public Integer call() throws Exception {
    TidemarkConfig cfg = ServeCommand.load(spec, config, null);
    Vertx vertx = Vertx.vertx();
    try {
      // every served database, the default first; a refusal stops before the next one is touched
      for (DatabaseConfig db : cfg.databases()) {
        int code = migrate(vertx, db, cfg.databases().size() > 1 ? "database " + db.name() + ": " : "");
        if (code != 0) {
          return code;
        }
      }
      return 0;
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  private int migrate(Vertx vertx, DatabaseConfig db, String label) throws Exception {
    Pool pool = dev.tidemark.database.Pools.create(vertx, db);
    try {
      List<String> problems = CallerRoleCheck.problems(pool, db.callerPasswords().keySet(), db.user(),
          db.schemas()).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      if (!problems.isEmpty()) {
        var err = spec.commandLine().getErr();
        err.println("tidemark migrate: " + label + "refused, because a caller role could reach past its grants (see docs/security.md):");
        problems.forEach(p -> err.println("  - " + p));
        err.println("Fix each one, then run tidemark migrate again. Nothing was changed" + (label.isEmpty() ? "." : " in " + db.name() + "."));
        err.flush();
        return 2;
      }
      List<Integer> applied;
      int published;
      try {
        applied = Migrator.migrate(pool).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
        // the served tables get REPLICA IDENTITY FULL and join the publication now, not at the first node's start
        published = pool.preparedQuery("SELECT tidemark.capture_schemas($1)")
            .execute(io.vertx.sqlclient.Tuple.of(db.schemas().toArray(new String[0])))
            .map(rows -> rows.iterator().next().getInteger(0)).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof IllegalStateException ise) {
          var err = spec.commandLine().getErr();
          err.println("tidemark migrate: " + label + ise.getMessage());
          err.println("Nothing was changed" + (label.isEmpty() ? "." : " in " + db.name() + "."));
          err.flush();
          return 2;
        }
        throw e;
      }
      spec.commandLine().getOut().println(label + "Tidemark schema is at version " + Migrator.latestVersion()
          + (applied.isEmpty() ? " (nothing to do)" : " (applied " + applied + ")")
          + (published > 0 ? "; capture set up on " + published + " table(s)" : ""));
      // a table the capture cannot follow is said here too, not only in status and the node's log
      var unfollowed = pool.query(CaptureSetup.PROBLEMS_SQL).execute().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
      if (unfollowed.size() > 0) {
        var out = spec.commandLine().getOut();
        out.println(label + "capture cannot fully follow " + unfollowed.size() + " table(s):");
        unfollowed.forEach(r -> out.println(label + "  - " + r.getString("relation") + ": " + r.getString("problem")));
      }
      return 0;
    } finally {
      pool.close();
    }
  }
}
