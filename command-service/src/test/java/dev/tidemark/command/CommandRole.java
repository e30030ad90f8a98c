package dev.tidemark.command;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Deployable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The command role for this module's integration tests, with the changelog role beside it: who
 * made each change, and the changelog an undo reads, are written by its relay. Returns once the
 * relay has decoded what the suite wrote before it started.
 */
final class CommandRole {

  private CommandRole() {}

  static ServiceHarness start(SharedInfra infra, String db, Map<ConfigKey, String> overrides) {
    // the database's name is the topic's, so each test class has a changelog of its own
    ServiceHarness harness = ServiceHarness.start(infra, "command,changelog", (vertx, config, pool, node) -> {
      List<Deployable> all = new ArrayList<>(List.of(new CommandVerticle(node, config, pool, true)));
      all.addAll(ChangelogRole.verticles(vertx, config, pool, node));
      return all;
    }, ChangelogRole.served(infra, db, db, overrides));
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }
}
