package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.contract.ToolException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The options and the run of a command that works on one served database with Tidemark's own
 * login ({@code proposals}, {@code consumers}): what it prints on success, or the refusal's message
 * and status 1.
 */
abstract class OnDatabase {

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file; docs/configuration.md lists its keys.")
  Path config;

  @Option(names = "--database", paramLabel = "NAME", description = "The served database; default: the default database.")
  String database;

  /** Runs {@code work} with a Vert.x of its own and the database's config, for at most {@code timeoutSeconds}. */
  int run(String command, long timeoutSeconds, BiFunction<Vertx, TidemarkConfig, Future<String>> work) throws Exception {
    TidemarkConfig all = ServeCommand.load(spec, config, null);
    TidemarkConfig cfg = all.forDatabase(database == null ? all.defaultDatabase().name() : database);
    Vertx vertx = Vertx.vertx();
    try {
      String out = work.apply(vertx, cfg).toCompletionStage().toCompletableFuture().get(timeoutSeconds, TimeUnit.SECONDS);
      spec.commandLine().getOut().println(out);
      return 0;
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      spec.commandLine().getErr().println("tidemark " + command + ": " + (cause instanceof ToolException te ? te.getMessage() : cause.toString()));
      return 1;
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
