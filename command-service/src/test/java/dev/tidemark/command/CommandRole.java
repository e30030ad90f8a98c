package dev.tidemark.command;

import dev.tidemark.changelog.CaptureVerticle;
import dev.tidemark.changelog.RelayVerticle;
import dev.tidemark.changelog.TopicVerticle;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
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
    Map<ConfigKey, String> values = new java.util.EnumMap<>(ConfigKey.class);
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    // the database's name is the topic's, so each test class has a changelog of its own
    values.put(ConfigKey.DATABASE_NAME, db);
    values.putAll(overrides);
    ServiceHarness harness = ServiceHarness.start(infra, "command,changelog", (vertx, config, pool, node) -> List.of(
        new CommandVerticle(node, config, pool, true),
        new TopicVerticle(node, config), new CaptureVerticle(config, pool), new RelayVerticle(node, config, pool)), values);
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }
}
