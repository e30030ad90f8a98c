package dev.tidemark.node.cli;

import dev.tidemark.contract.Version;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tidemark}: the root command. Unknown flags and bad values exit with 2 and name the culprit. */
@Command(
    name = "tidemark",
    mixinStandardHelpOptions = true,
    versionProvider = TidemarkCommand.VersionProvider.class,
    description = "Serves a PostgreSQL database to AI agents over the Model Context Protocol.",
    subcommands = {DevCommand.class, ServeCommand.class, MigrateCommand.class, DoctorCommand.class, UninstallCommand.class, TokenCommand.class, KeysCommand.class,
        KafkaCommand.class, ProposalsCommand.class, ConsumersCommand.class,
        CommandLine.HelpCommand.class})
public final class TidemarkCommand implements Runnable {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new TidemarkCommand());
    cl.setExecutionExceptionHandler((ex, line, parseResult) -> {
      Throwable root = CommandSession.root(ex);
      if (root instanceof CommandFailure || root instanceof IllegalArgumentException || root instanceof IllegalStateException) {
        // Tidemark's own refusals: the message names what to change (a flag, a setting, a right, a file)
        line.getErr().println("tidemark: " + root.getMessage());
        return CommandLine.ExitCode.USAGE;
      }
      if (root instanceof io.vertx.pgclient.PgException pg) {
        line.getErr().println("tidemark: PostgreSQL refused: " + pg.getErrorMessage() + " (SQLSTATE " + pg.getSqlState() + ")"
            + (pg.getDetail() == null ? "" : " " + pg.getDetail()) + (pg.getHint() == null ? "" : " " + pg.getHint()));
        return CommandLine.ExitCode.SOFTWARE;
      }
      // not a refusal Tidemark foresaw: still one line, naming what failed
      line.getErr().println("tidemark: the command failed unexpectedly (" + root.getClass().getName() + ": " + root.getMessage()
          + "); nothing more was done; report this line if it persists");
      return CommandLine.ExitCode.SOFTWARE;
    });
    return cl;
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"tidemark " + Version.get()};
    }
  }
}
