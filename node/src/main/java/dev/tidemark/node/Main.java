package dev.tidemark.node;

import dev.tidemark.node.cli.TidemarkCommand;

/** The one runnable: {@code java -jar tidemark.jar <command>}. */
public final class Main {

  private Main() {}

  public static void main(String[] args) {
    int code = TidemarkCommand.commandLine().execute(args);
    if (code != 0) {
      System.exit(code);
    }
    // dev and serve return only once they were stopped; their shutdown hooks did the rest
    System.exit(0);
  }
}
