package dev.tidemark.query;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.query.events.EventsVerticle;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import java.util.List;
import java.util.Map;

/** The query role as a node deploys it (the read tools and the events tools), for this module's integration tests. */
final class QueryRole {

  private QueryRole() {}

  static ServiceHarness start(SharedInfra infra, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "query", (vertx, config, pool, node) -> List.of(
        new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)), new EventsVerticle(node, config, pool)), overrides);
  }
}
