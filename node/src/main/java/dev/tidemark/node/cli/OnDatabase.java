package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import java.util.function.BiFunction;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options and the run of a command that works on one served database with Tidemark's own login ({@code keys},
 * {@code proposals}, {@code consumers}): what it prints on success, or a refusal's message and status 1. Waiting for the
 * database and its failures are the session's ({@link CommandSession}).
 */
abstract class OnDatabase {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin
  DatabaseOptions options;

  @Option(names = "--database", paramLabel = "NAME", description = "The served database; default: the default database.")
  String database;

  /** The configuration seen from the database {@code --database} names. */
  TidemarkConfig config() {
    TidemarkConfig all = options.load();
    return all.forDatabase(database == null ? all.defaultDatabase().name() : database);
  }

  /** Runs {@code work} on a session that holds up to {@code connections} at once, and prints what it answers. */
  int run(String command, int connections, BiFunction<CommandSession, TidemarkConfig, Future<String>> work) {
    TidemarkConfig cfg = config();
    try (CommandSession session = options.open(cfg.database(), connections)) {
      String out;
      try {
        out = session.await(work.apply(session, cfg));
      } catch (ToolException refused) {
        spec.commandLine().getErr().println("tidemark " + command + ": " + refused.getMessage());
        return 1;
      }
      spec.commandLine().getOut().println(out);
      return 0;
    }
  }
}
