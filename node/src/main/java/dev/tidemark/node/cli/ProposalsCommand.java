package dev.tidemark.node.cli;

import dev.tidemark.command.Proposals;
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
    int with(Function<Proposals, Future<String>> work) {
      // an approval holds two connections at once, whatever database.pool-size says
      return run("proposals", Proposals.CONNECTIONS, (session, cfg) -> work.apply(new Proposals(session.vertx(), cfg, session.pool())));
    }

    /** Who decides: --by, else the operating system's user. */
    static String person(String by) {
      return by != null && !by.isBlank() ? by : "person:" + System.getProperty("user.name", "unknown");
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists proposals, newest first, one JSON object per line.")
  static final class ListProposals extends Common implements Callable<Integer> {
    @Option(names = "--status", paramLabel = "STATUS", description = "Only pending, applying, applied, rejected, failed, stale or void"
        + " ones.")
    String status;

    @Override
    public Integer call() throws Exception {
      if (status != null && !java.util.List.of("pending", "applying", "applied", "rejected", "failed", "stale", "void").contains(status)) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--status: pending, applying, applied, rejected, failed, stale or void");
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

  @Command(name = "show", mixinStandardHelpOptions = true, description = "Shows a proposal: who proposed what, every row it writes"
      + " (rows: table, op, key, before, after, and the columns an update changes), the plan its proposer was shown, and every step so"
      + " far. An approval writes exactly these rows, or nothing.")
  static final class Show extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Override
    public Integer call() throws Exception {
      return with(p -> p.show(id).map(JsonObject::encodePrettily));
    }
  }

  @Command(name = "approve", mixinStandardHelpOptions = true, description = "Approves a pending proposal and applies it at once, as its"
      + " proposer, writing exactly the rows proposals show shows, or nothing: it is stale (and says what differs) when a row changed"
      + " since or the change would now write other values, and void when its proposer's token was revoked or expired or its role"
      + " may no longer make the change. Exits 0 only when applied.")
  static final class Approve extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "ID")
    String id;

    @Option(names = "--by", paramLabel = "NAME", description = "Who approves, for the audit (default: person:<the OS user>).")
    String by;

    @Override
    public Integer call() throws Exception {
      int[] code = {0};
      int exit = with(p -> p.approve(id, person(by)).map(shown -> {
        boolean applied = "applied".equals(shown.getString("status"));
        code[0] = applied ? 0 : 1;
        String why = applied ? shown.getJsonObject("outcome").getString("summary") : shown.getString("reason");
        return "Proposal " + id + " " + shown.getString("status") + (why == null ? "" : ": " + why);
      }));
      return exit != 0 ? exit : code[0];
    }
  }

  @Command(name = "reject", mixinStandardHelpOptions = true, description = "Rejects a pending proposal: nothing of it is applied, and"
      + " its proposer reads the reason through status.")
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
