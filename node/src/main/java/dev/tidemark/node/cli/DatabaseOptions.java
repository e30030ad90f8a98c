package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.DatabaseConfig;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The flags of the commands an operator runs against a served database: its config file and how long to wait. */
final class DatabaseOptions {

  @CommandLine.Spec(CommandLine.Spec.Target.MIXEE)
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file; docs/configuration.md lists its keys.")
  Path config;

  @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = CommandSession.DEFAULT_TIMEOUT,
      description = "How long the command waits for PostgreSQL (to accept a connection, to give one on a busy host, to"
          + " answer) before it gives up: a number and s or m (default: ${DEFAULT-VALUE}).")
  String timeout;

  TidemarkConfig load() {
    return ServeCommand.load(spec, config, null);
  }

  Duration timeout() {
    return CommandSession.parseTimeout(timeout, spec);
  }

  /** Connects to {@code db} as Tidemark's login, waiting up to {@code --timeout}; fails with a sentence that names the fix. */
  CommandSession open(DatabaseConfig db) {
    return CommandSession.open(db, timeout());
  }

  /** Like {@link #open(DatabaseConfig)}, for a command that holds {@code connections} at once. */
  CommandSession open(DatabaseConfig db, int connections) {
    return CommandSession.open(db, timeout(), connections);
  }
}
