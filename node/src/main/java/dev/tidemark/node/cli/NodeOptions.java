package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The flags of the commands that describe one node, serve and doctor: its config file and its roles. */
final class NodeOptions {

  @Option(names = "--roles", split = ",", paramLabel = "ROLE",
      description = "Roles to run, separated by commas: gateway, query, command, changelog (default: the roles key, else all).")
  List<String> roles;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file; docs/configuration.md lists its keys.")
  Path config;

  TidemarkConfig load(CommandLine.Model.CommandSpec spec) {
    return ServeCommand.load(spec, config, roles);
  }
}
