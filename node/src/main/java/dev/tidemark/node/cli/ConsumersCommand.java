package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.query.events.ConsumerAdmin;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.Callable;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tidemark consumers}: an administrator lists the events consumers of a database and
 * deletes those nobody needs. It needs the database's login, which no agent has.
 */
@Command(name = "consumers", mixinStandardHelpOptions = true, description = "Lists and deletes events consumers, with their share"
    + " groups and dead-letter topics.",
    subcommands = {ConsumersCommand.ListConsumers.class, ConsumersCommand.Delete.class})
final class ConsumersCommand extends CommandGroup {

  /** Options every consumers command shares. */
  static class Common extends OnDatabase {

    /** Runs {@code work} with the database's consumers; a refusal prints its message and exits 1. */
    int with(BiFunction<ConsumerAdmin, TidemarkConfig, Future<String>> work) {
      return run("consumers", 2, (session, cfg) -> work.apply(new ConsumerAdmin(session.vertx(), session.pool(), cfg.database().name()), cfg));
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists the consumers, least recently used first, one JSON"
      + " object per line: name, owner (token id or OAuth subject), owner_name, owner_role, tables, lease_seconds, created_at,"
      + " last_used_at, share_group, dead_letter_topic, dead_lettered, and remove_requested_at or removing_since while one is removed.")
  static final class ListConsumers extends Common implements Callable<Integer> {
    @Override
    public Integer call() {
      return with((admin, cfg) -> admin.list().map(list -> {
        StringBuilder out = new StringBuilder();
        for (Object o : list) {
          JsonObject c = ((JsonObject) o).copy();
          // the share group is what delete takes
          c.put("share_group", c.remove("group_id"));
          out.append(out.isEmpty() ? "" : "\n").append(c.encode());
        }
        return out.isEmpty() ? "No consumers." : out.toString();
      }));
    }
  }

  @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes a consumer: a node with the query role removes it at"
      + " its next sweep (events.consumer-sweep-seconds), with its share group, its dead-letter topic and its dead letters; its leases"
      + " end. Waits for it to be gone. A later events_next of its name creates a new consumer.")
  static final class Delete extends Common implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "SHARE_GROUP", description = "The consumer's share_group, as list shows it.")
    String group;

    @Option(names = "--wait", paramLabel = "SECONDS", description = "How long to wait for its removal (default: three sweeps).")
    Long waitSeconds;

    @Override
    public Integer call() {
      int[] code = {0};
      long wait = waitSeconds != null ? waitSeconds : 3 * config().events().consumerSweepSeconds();
      int exit = run("consumers", 2, (session, cfg) -> {
        session.extendBy(java.time.Duration.ofSeconds(wait));  // the wait for the removal comes on top of --timeout
        return new ConsumerAdmin(session.vertx(), session.pool(), cfg.database().name()).delete(group, wait * 1000).map(gone -> {
          code[0] = gone ? 0 : 3;
          return gone ? "Consumer " + group + " removed, with its share group and dead-letter topic."
              : "Consumer " + group + " is marked for removal, but no node removed it within " + wait + " s; a node with the query"
                  + " role removes it at its next sweep (is one running?).";
        });
      });
      return exit != 0 ? exit : code[0];
    }
  }
}
