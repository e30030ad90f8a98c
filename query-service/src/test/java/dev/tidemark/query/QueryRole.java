package dev.tidemark.query;

import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.query.events.EventsVerticle;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Deployable;
import io.vertx.sqlclient.Pool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The query role as a node deploys it (the read tools and the events tools), for this module's integration tests. */
final class QueryRole {

  private QueryRole() {}

  static ServiceHarness start(SharedInfra infra, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "query", (vertx, config, pool, node) -> verticles(config, pool, node), overrides);
  }

  /**
   * The query role with the fan-out a node deploys beside it, which hears of every change on the
   * changelog topic: what a node of the query role alone runs.
   */
  static ServiceHarness withFanOut(SharedInfra infra, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "query", (vertx, config, pool, node) -> fannedOut(config, pool, node), overrides);
  }

  private static List<Deployable> fannedOut(TidemarkConfig config, Pool pool, NodeInfo node) {
    List<Deployable> all = new ArrayList<>(List.of(new FanOutVerticle(node, config)));
    all.addAll(verticles(config, pool, node));
    return all;
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
    ServiceHarness harness = ServiceHarness.start(infra, "query,changelog", (vertx, config, pool, node) -> {
      List<Deployable> all = new ArrayList<>(ChangelogRole.verticles(vertx, config, pool, node));
      all.addAll(verticles(config, pool, node));
      return all;
    }, values);
    TestDatabases.awaitDecoded(infra, db);
    return harness;
  }

  /** The read tools' and the events tools' verticles. */
  private static List<Deployable> verticles(TidemarkConfig config, Pool pool, NodeInfo node) {
    return List.of(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)), new EventsVerticle(node, config, pool));
  }
}
