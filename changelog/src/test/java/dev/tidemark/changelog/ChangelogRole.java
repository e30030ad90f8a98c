package dev.tidemark.changelog;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.Deployable;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The changelog role as a node deploys it (the topic, capture and the relay) for PostgreSQL
 * database {@code db} served as {@code name}, so that each test class has a topic of its own.
 * Closing the harness stops the relay, as a node that stops does; starting another one resumes
 * from the slot.
 */
public final class ChangelogRole {

  private ChangelogRole() {}

  public static ServiceHarness start(SharedInfra infra, String db, String name, Map<ConfigKey, String> overrides) {
    return ServiceHarness.start(infra, "changelog", ChangelogRole::verticles, served(infra, db, name, overrides));
  }

  /** The changelog role's verticles in the order a node deploys them, for a harness that runs it beside another role. */
  public static List<Deployable> verticles(Vertx vertx, TidemarkConfig config, Pool pool, NodeInfo node) {
    return List.of(new TopicVerticle(node, config), new CaptureVerticle(config, pool), new RelayVerticle(node, config, pool));
  }

  /** The changelog topic of database {@code name}. */
  public static String topic(SharedInfra infra, String name) {
    return TidemarkConfig.from(ServiceHarness.config(infra, "changelog")).kafka().topicFor(name);
  }

  /** {@code overrides}, with PostgreSQL database {@code db} served as {@code name}: what a role of another module serves beside this one. */
  public static Map<ConfigKey, String> served(SharedInfra infra, String db, String name, Map<ConfigKey, String> overrides) {
    Map<ConfigKey, String> values = new EnumMap<>(ConfigKey.class);
    values.put(ConfigKey.DATABASE_URL, infra.postgres().url(db));
    values.put(ConfigKey.DATABASE_NAME, name);
    values.putAll(overrides);
    return values;
  }
}
