package dev.tidemark.node;

import dev.tidemark.node.cli.TidemarkCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import picocli.CommandLine;

/** Runs the CLI in this JVM and keeps what it printed. */
final class Cli {

  record Run(int code, String out, String err) {}

  private Cli() {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = TidemarkCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return new Run(cl.execute(args), out.toString(), err.toString());
  }
}
