package dev.tidemark.command;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.query.QueryVerticle;
import dev.tidemark.query.StalenessCheck;
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
    return start(infra, db, overrides, false);
  }

  /**
   * The command role with the query role beside it too, as a node of those roles runs them: the
   * change tools, with the read tools to look at what they did.
   */
  static ServiceHarness withQuery(SharedInfra infra, String db, Map<ConfigKey, String> overrides) {
    return start(infra, db, overrides, true);
  }

  private static ServiceHarness start(SharedInfra infra, String db, Map<ConfigKey, String> overrides, boolean query) {
    // the database's name is the topic's, so each test class has a changelog of its own
    ServiceHarness harness = ServiceHarness.start(infra, query ? "query,command,changelog" : "command,changelog",
        (vertx, config, pool, node) -> {
          // the topic first, so that the relay's first records find it
          List<Deployable> all = new ArrayList<>(ChangelogRole.verticles(vertx, config, pool, node));
          if (query) {
            all.add(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)));
          }
          all.add(new CommandVerticle(node, config, pool, true));
          return all;
        }, ChangelogRole.served(infra, db, db, overrides));
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }
}
