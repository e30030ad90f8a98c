package dev.tidemark.query;

import dev.tidemark.changelog.CaptureVerticle;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.changelog.RelayVerticle;
import dev.tidemark.changelog.TopicVerticle;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.query.events.EventsVerticle;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import java.util.List;
import java.util.Map;

/** The query role as a node deploys it (the read tools and the events tools), for this module's integration tests. */
final class QueryRole {

  private QueryRole() {}

  static ServiceHarness start(SharedInfra infra, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "query", (vertx, config, pool, node) -> List.of(
        new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)), new EventsVerticle(node, config, pool)), overrides);
  }

  /**
   * The query role with the fan-out a node deploys beside it, which hears of every change on the
   * changelog topic: what a node of the query role alone runs.
   */
  static ServiceHarness withFanOut(SharedInfra infra, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "query", (vertx, config, pool, node) -> List.of(new FanOutVerticle(node, config),
        new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)), new EventsVerticle(node, config, pool)), overrides);
  }

  /**
   * The query role with the changelog role beside it, serving PostgreSQL database {@code db}: what
   * a cursor's staleness, changes_since, watches and events read is written by its relay. Returns
   * once the relay has decoded what the suite wrote before it started.
   */
  static ServiceHarness withChangelog(SharedInfra infra, String db, Map<ConfigKey, String> overrides) {
    Map<ConfigKey, String> values = new java.util.EnumMap<>(ConfigKey.class);
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    values.putAll(overrides);
    ServiceHarness harness = ServiceHarness.start(infra, "query,changelog", (vertx, config, pool, node) -> List.of(
        new TopicVerticle(node, config), new CaptureVerticle(config, pool), new RelayVerticle(node, config, pool),
        new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)), new EventsVerticle(node, config, pool)), values);
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }
}
