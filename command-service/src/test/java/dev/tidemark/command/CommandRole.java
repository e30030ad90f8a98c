package dev.tidemark.command;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.gateway.GatewayFront;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.query.QueryVerticle;
import dev.tidemark.query.StalenessCheck;
import dev.tidemark.query.events.EventsVerticle;
import dev.tidemark.testsupport.NodeHarness;
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

  /**
   * The command role behind a gateway, with the query and changelog roles beside it, as a node of
   * every role runs them for PostgreSQL database {@code db} served under its own name: the change
   * tools as an agent calls them over MCP, with the read tools to look at what they did. Returns
   * once the relay has decoded what the suite wrote before it started.
   */
  static NodeHarness node(SharedInfra infra, String db, Map<ConfigKey, String> overrides) {
    NodeHarness harness = NodeHarness.start(infra, "gateway,query,command,changelog", GatewayFront::deploy, (vertx, config, pool, node) -> {
      // the topic first, so that the relay's first records find it, and the fan-out the gateway and the query role hear
      List<Deployable> all = new ArrayList<>(ChangelogRole.verticles(vertx, config, pool, node));
      all.add(new FanOutVerticle(node, config));
      all.add(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)));
      all.add(new EventsVerticle(node, config, pool));
      all.add(new CommandVerticle(node, config, pool, true));
      return all;
    }, ChangelogRole.served(infra, db, db, overrides));
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }
}
