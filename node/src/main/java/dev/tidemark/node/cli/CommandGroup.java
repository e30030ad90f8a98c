package dev.tidemark.node.cli;

import picocli.CommandLine;

/** A command that only groups subcommands ({@code token}, {@code keys}, {@code proposals}): alone, it prints its usage. */
abstract class CommandGroup implements Runnable {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
