package dev.tidemark.node.cli;

import dev.tidemark.contract.Role;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.node.TidemarkNode;
import dev.tidemark.config.ConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code tidemark serve}: a production node running the given roles against existing PostgreSQL and Kafka. */
@Command(name = "serve", mixinStandardHelpOptions = true,
    description = "Runs a node with the given roles, configured by a file and TIDEMARK_* environment variables.")
final class ServeCommand implements Callable<Integer> {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @CommandLine.Mixin
  NodeOptions node;

  @Override
  public Integer call() throws Exception {
    TidemarkConfig cfg = node.load(spec);
    TidemarkNode node = TidemarkNode.start(cfg).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    spec.commandLine().getOut().println("Tidemark node " + node.nodeId() + " runs " + cfg.roles());
    spec.commandLine().getOut().flush();
    NodeRunner.runUntilStopped(node, () -> {});
    return 0;
  }

  /** Shared by the commands that read a config file: checks flags first so errors name them. */
  static TidemarkConfig load(CommandLine.Model.CommandSpec spec, Path file, List<String> roles) {
    return load(spec, file, roles, Map.of());
  }

  /** Like {@link #load(CommandLine.Model.CommandSpec, Path, List)}, with {@code keys} given on the command line on top. */
  static TidemarkConfig load(CommandLine.Model.CommandSpec spec, Path file, List<String> roles, Map<ConfigKey, String> keys) {
    Map<ConfigKey, String> flags = new EnumMap<>(ConfigKey.class);
    flags.putAll(keys);
    if (roles != null) {
      for (String role : roles) {
        try {
          Role.fromWire(role.trim());
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(spec.commandLine(), "--roles: " + e.getMessage());
        }
      }
      flags.put(ConfigKey.ROLES, String.join(",", roles));
    }
    if (file != null && !Files.isReadable(file)) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--config: cannot read " + file);
    }
    return ConfigLoader.load(file, System.getenv(), flags);
  }
}
