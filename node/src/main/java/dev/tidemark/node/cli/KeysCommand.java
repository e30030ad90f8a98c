package dev.tidemark.node.cli;

import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tidemark keys}: the key ring that seals page cursors and plan ids and signs what
 * Tidemark's SQL functions accept. A rotation needs no restart: nodes read the ring every
 * {@code keys.refresh-seconds}; the new key signs only after twice that, and the old keys keep
 * verifying for the grace period.
 */
@Command(name = "keys", mixinStandardHelpOptions = true, description = "Lists and rotates the key ring.",
    subcommands = {KeysCommand.ListKeys.class, KeysCommand.Rotate.class})
final class KeysCommand extends CommandGroup {

  static class Common extends OnDatabase {

    <T> T withPool(TidemarkConfig cfg, java.util.function.Function<Pool, io.vertx.core.Future<T>> work) {
      try (CommandSession session = options.open(cfg.database())) {
        return session.await(work.apply(session.pool()));
      }
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists the keys, never their secrets.")
  static final class ListKeys extends Common implements Callable<Integer> {
    @Override
    public Integer call() throws Exception {
      var rows = withPool(config(), pool -> pool.query("SELECT id, created_at, active_from, retires_at,"
          + " (retires_at IS NULL OR retires_at > now()) AS verifies, active_from <= now() AS may_sign"
          + " FROM tidemark.key_ring ORDER BY id").execute());
      for (Row r : rows) {
        spec.commandLine().getOut().println(new JsonObject().put("id", r.getInteger("id"))
            .put("created_at", r.getOffsetDateTime("created_at").toString())
            .put("active_from", r.getOffsetDateTime("active_from").toString())
            .put("retires_at", r.getOffsetDateTime("retires_at") == null ? null : r.getOffsetDateTime("retires_at").toString())
            .put("verifies", r.getBoolean("verifies")).put("may_sign", r.getBoolean("may_sign")).encode());
      }
      return 0;
    }
  }

  @Command(name = "rotate", mixinStandardHelpOptions = true,
      description = "Adds a new key; the others keep verifying for the grace period, then retire.")
  static final class Rotate extends Common implements Callable<Integer> {
    @Option(names = "--grace-seconds", defaultValue = "86400",
        description = "How long the previous keys keep verifying cursors and plan ids they made (default: ${DEFAULT-VALUE}).")
    int graceSeconds;

    @Override
    public Integer call() throws Exception {
      if (graceSeconds < 0) {
        throw new CommandLine.ParameterException(spec.commandLine(), "--grace-seconds: 0 or more");
      }
      TidemarkConfig cfg = config();
      // a key signs only once every node has read it: two refresh periods
      int activeAfter = (int) Math.min(Integer.MAX_VALUE, 2 * cfg.keysRefreshSeconds());
      // the previous key signs until the new one does, and what it signed then must verify for the whole grace period
      int grace = (int) Math.min(Integer.MAX_VALUE, (long) activeAfter + graceSeconds);
      int id = withPool(cfg, pool -> pool.preparedQuery("SELECT tidemark.add_key($1, $2)").execute(Tuple.of(activeAfter, grace))
          .map(rows -> rows.iterator().next().getInteger(0)));
      spec.commandLine().getOut().println("Key " + id + " added: it signs in " + activeAfter + " s; the previous keys verify for "
          + grace + " s more.");
      return 0;
    }
  }
}
