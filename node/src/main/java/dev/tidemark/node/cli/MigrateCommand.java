package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.database.schema.ChangelogStore;
import dev.tidemark.database.Pools;
import io.vertx.sqlclient.Pool;
import dev.tidemark.database.schema.Migrator;
import dev.tidemark.node.migrate.CallerRoleCheck;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tidemark migrate}: installs or upgrades Tidemark's own schema, then exits. */
@Command(name = "migrate", mixinStandardHelpOptions = true,
    description = "Installs or upgrades Tidemark's own schema in every configured database.")
final class MigrateCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin
  DatabaseOptions options;

  @Override
  public Integer call() {
    TidemarkConfig cfg = options.load();
    // every served database, the default first; a refusal stops before the next one is touched
    for (DatabaseConfig db : cfg.databases()) {
      int code = migrate(db, cfg.databases().size() > 1 ? "database " + db.name() + ": " : "");
      if (code != 0) {
        return code;
      }
    }
    return 0;
  }

  private int migrate(DatabaseConfig db, String label) {
    try (CommandSession session = options.open(db)) {
      PrintWriter err = spec.commandLine().getErr();
      List<String> problems = session.await(CallerRoleCheck.problems(session.pool(), db.callerPasswords().keySet(), db.user(),
          db.schemas()));
      if (!problems.isEmpty()) {
        err.println("tidemark migrate: " + label + "refused, because a caller role could reach past its grants (see docs/security.md):");
        problems.forEach(p -> err.println("  - " + p));
        err.println("Fix each one, then run tidemark migrate again. Nothing was changed" + (label.isEmpty() ? "." : " in " + db.name() + "."));
        err.flush();
        return 2;
      }
      List<Integer> applied;
      int published;
      try {
        applied = session.await(Migrator.migrate(session.pool()));
        // the served tables get their replica identity (database.key-only-tables) and join the publication now, not at the first node's start
        published = session.await(session.pool().preparedQuery(CaptureSetup.RECONCILE_SQL)
            .execute(CaptureSetup.reconcileArguments(db))
            .map(rows -> rows.iterator().next().getInteger(0)));
      } catch (IllegalStateException ise) {
        err.println("tidemark migrate: " + label + ise.getMessage());
        err.println("Nothing was changed" + (label.isEmpty() ? "." : " in " + db.name() + "."));
        err.flush();
        return 2;
      }
      var unfollowed = session.await(session.pool().query(CaptureSetup.PROBLEMS_SQL).execute());
      PrintWriter out = spec.commandLine().getOut();
      if (db.separateChangelog()) {
        // the changelog's own database gets its tables now; the relay moves what the served one holds at its next start
        DatabaseConfig store = db.changelogDatabase();
        Pool changelog = Pools.changelog(session.vertx(), db, session.pool());
        try {
          session.await(ChangelogStore.prepare(changelog));
        } finally {
          session.await(changelog.close());
        }
        out.println(label + "changelog stored in " + store.host() + ":" + store.port() + "/" + store.dbname() + " (database.changelog-url)");
      }
      out.println(label + "Tidemark schema is at version " + Migrator.latestVersion()
          + (applied.isEmpty() ? " (nothing to do)" : " (applied " + applied + ")")
          + (published - unfollowed.size() > 0 ? "; capture set up on " + (published - unfollowed.size()) + " table(s)" : ""));
      // a table the capture cannot follow is said here too, not only in status and the node's log
      if (unfollowed.size() > 0) {
        out.println(label + "capture cannot fully follow " + unfollowed.size() + " table(s):");
        unfollowed.forEach(r -> out.println(label + "  - " + r.getString("relation") + ": " + r.getString("problem")));
      }
      List<String> keyOnly = new java.util.ArrayList<>();
      session.await(session.pool().query(CaptureSetup.BEFORE_IMAGES_SQL).execute())
          .forEach(r -> {
            if ("key".equals(r.getString("before_images"))) {
              keyOnly.add(r.getString("relation"));
            }
          });
      if (!keyOnly.isEmpty()) {
        out.println(label + "changes keep only the key of updated and deleted rows (database.key-only-tables) on "
            + keyOnly.size() + " table(s): " + String.join(", ", keyOnly));
      }
      List<String> unplanned = new java.util.ArrayList<>();
      session.await(session.pool().query(CaptureSetup.UNPLANNED_SQL).execute()).forEach(r -> unplanned.add(r.getString(0)));
      if (!unplanned.isEmpty()) {
        out.println(label + "change tools do not change (no plan trigger, database.unplanned-tables) "
            + unplanned.size() + " table(s): " + String.join(", ", unplanned));
      }
      return 0;
    }
  }
}
