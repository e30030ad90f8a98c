package dev.tidemark.node.cli;

import dev.tidemark.command.Proposals;
import dev.tidemark.database.Pools;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tidemark proposals}: people decide on the changes agents proposed to tables of
 * database.approval-tables. It needs the database's login, which no agent has.
 */
@Command(name = "proposals", mixinStandardHelpOptions = true, description = "Lists, shows, approves and rejects proposed changes to"
    + " protected tables (database.approval-tables).",
    subcommands = {ProposalsCommand.ListProposals.class, ProposalsCommand.Show.class, ProposalsCommand.Approve.class,
        ProposalsCommand.Reject.class})
final class ProposalsCommand extends CommandGroup {

  /** Options every proposals command shares. */
  static class Common extends OnDatabase {

    /** Runs {@code work} against the database's proposals; a refusal prints its message and exits 1. */
    int with(Function<Proposals, Future<String>> work) throws Exception {
      return run("proposals", 120, (vertx, cfg) -> work.apply(new Proposals(vertx, cfg, Pools.create(vertx, cfg.database()))));
    }

    /** Who decides: --by, else the operating system's user. */
    static String person(String by) {
      return by != null && !by.isBlank() ? by : "person:" + System.getProperty("user.name", "unknown");
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists proposals, newest first, one JSON object per line.")
  static final class ListProposals extends Common implements Callable<Integer> {
    @Option(names = "--status", paramLabel = "STATUS", description = "Only pending, applying, applied, rejected or failed ones.")
    String status;

    @Override
    public Integer call() throws Exception {
      if (status != null && !java.util.List.of("pending", "applying", "applied", "rejected", "failed").contains(status)) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--status: pending, applying, applied, rejected or failed");
      }
      return with(p -> p.list(status).map(list -> {
        StringBuilder out = new StringBuilder();
        for (Object o : list) {
          JsonObject row = (JsonObject) o;
          JsonObject line = new JsonObject();
          for (String f : new String[] {"proposal_id", "status", "caller", "tool", "tables", "created_at", "decided_by", "reason"}) {
            if (row.containsKey(f)) {
              line.put(f, row.getValue(f));
            }
          }
          out.append(out.isEmpty() ? "" : "\n").append(line.encode());
        }
        return out.isEmpty() ? "No proposals." : out.toString();
      }));
    }
  }

  @Command(name = "show", mixinStandardHelpOptions = true, description = "Shows a proposal: who proposed what, the plan (rows per"
      + " table, samples) and every step so far.")
  static final class Show extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Override
    public Integer call() throws Exception {
      return with(p -> p.show(id).map(JsonObject::encodePrettily));
    }
  }

  @Command(name = "approve", mixinStandardHelpOptions = true, description = "Approves a pending proposal and applies it at once, as its"
      + " proposer, exactly as proposed: it fails (and says why) when the rows it touches changed since.")
  static final class Approve extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Option(names = "--by", paramLabel = "NAME", description = "Who approves, for the audit (default: person:<the OS user>).")
    String by;

    @Override
    public Integer call() throws Exception {
      int[] code = {0};
      int exit = with(p -> p.approve(id, person(by)).map(shown -> {
        code[0] = "applied".equals(shown.getString("status")) ? 0 : 1;
        return "Proposal " + id + " " + shown.getString("status") + ("failed".equals(shown.getString("status"))
            ? ": " + shown.getString("reason") : shown.getJsonObject("outcome") == null ? "" : ": " + shown.getJsonObject("outcome")
            .getString("summary"));
      }));
      return exit != 0 ? exit : code[0];
    }
  }

  @Command(name = "reject", mixinStandardHelpOptions = true, description = "Rejects a pending proposal: nothing of it is applied.")
  static final class Reject extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Option(names = "--by", paramLabel = "NAME", description = "Who rejects, for the audit (default: person:<the OS user>).")
    String by;

    @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the proposer.")
    String reason;

    @Override
    public Integer call() throws Exception {
      return with(p -> p.reject(id, person(by), reason).map(shown -> "Proposal " + id + " rejected."));
    }
  }
}
