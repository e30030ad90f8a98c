package dev.tidemark.node;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.node.cli.TidemarkCommand;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;

/** Runs the CLI in this JVM and keeps what it printed. */
final class Cli {

  record Run(int code, String out, String err) {}

  private Cli() {}

  /**
   * Runs {@code tidemark <command> <args...> --config FILE}, FILE written into {@code dir} from
   * {@code values} (JSON is YAML): how a person runs a command against a node's database.
   */
  static Run withConfig(Path dir, Map<ConfigKey, String> values, String command, String... args) throws IOException {
    JsonObject yaml = new JsonObject();
    values.forEach((k, v) -> yaml.put(k.key(), v));
    Path file = dir.resolve("tidemark.yaml");
    Files.writeString(file, yaml.encodePrettily());
    String[] all = new String[args.length + 3];
    all[0] = command;
    System.arraycopy(args, 0, all, 1, args.length);
    all[args.length + 1] = "--config";
    all[args.length + 2] = file.toString();
    return run(all);
  }

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = TidemarkCommand.commandLine();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    return new Run(cl.execute(args), out.toString(), err.toString());
  }
}
