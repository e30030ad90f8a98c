package dev.tidemark.gateway;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.changelog.ChangelogRole;
import dev.tidemark.changelog.FanOutVerticle;
import dev.tidemark.command.CommandVerticle;
import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.query.QueryVerticle;
import dev.tidemark.query.StalenessCheck;
import dev.tidemark.query.events.EventsVerticle;
import dev.tidemark.runtime.NodeInfo;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import io.vertx.core.Deployable;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The gateway as a node deploys it (the node-wide part, then one endpoint per event loop over it),
 * in front of the roles of a {@code NodeHarness}: the front of this module's integration tests.
 */
public final class GatewayFront {

  private GatewayFront() {}

  /** Deploys the gateway on {@code vertx}; completes with the port its endpoints listen on. */
  public static Future<Integer> deploy(Vertx vertx, TidemarkConfig config, Authenticator auth, NodeInfo node) {
    GatewayNode gateway = new GatewayNode(node, config, auth, List.of());
    return vertx.deployVerticle(gateway)
        .compose(x -> vertx.deployVerticle(gateway::newInstance,
            new DeploymentOptions().setInstances(config.cluster().gatewayInstanceCount())))
        .map(x -> gateway.actualPort());
  }

  /**
   * The gateway in front of the query, command and changelog roles, as a node of every role runs
   * them for PostgreSQL database {@code db} served under its own name. Returns once the relay has
   * decoded what the suite wrote before it started.
   */
  public static NodeHarness everyRole(SharedInfra infra, String db, Map<ConfigKey, String> overrides) {
    return start(infra, db, "gateway,query,command,changelog", overrides);
  }

  /**
   * The gateway in front of the verticles of {@code roles} (a value of {@code node.roles}, the
   * gateway among them) as a node deploys them, for PostgreSQL database {@code db} served under its
   * own name. With the changelog role, returns once its relay has decoded what the suite wrote
   * before it started.
   */
  public static NodeHarness start(SharedInfra infra, String db, String roles, Map<ConfigKey, String> overrides) {
    List<String> named = List.of(roles.split(","));
    // the suite's shared database keeps the name a node gives it by default ("main"), as a test of a whole node sees it
    Map<ConfigKey, String> values = ServiceHarness.DATABASE.equals(db) ? overrides : ChangelogRole.served(infra, db, db, overrides);
    NodeHarness harness = NodeHarness.start(infra, roles, GatewayFront::deploy, (vertx, config, pool, node) -> {
      // the topic first, so that the relay's first records find it, and the fan-out the gateway and the query role hear
      List<Deployable> all = new ArrayList<>();
      if (named.contains("changelog")) {
        all.addAll(ChangelogRole.verticles(vertx, config, pool, node));
      }
      all.add(new FanOutVerticle(node, config));
      if (named.contains("query")) {
        all.add(new QueryVerticle(node, config, pool, StalenessCheck.changelog(pool)));
        all.add(new EventsVerticle(node, config, pool));
      }
      if (named.contains("command")) {
        all.add(new CommandVerticle(node, config, pool, true));
      }
      return all;
    }, values);
    if (named.contains("changelog")) {
      TestDatabases.awaitDecoded(infra, db);
    }
    return harness;
  }

  /**
   * The value of {@code database.caller-passwords} for a node whose callers include {@link #nobody}'s:
   * the harness's two callers and {@code it_nobody}.
   */
  public static String callerPasswordsWithNobody() {
    Map<String, String> all = new java.util.TreeMap<>(ServiceHarness.CALLER_PASSWORDS);
    all.put("it_nobody", "it-nobody-password");
    return String.join(",", all.entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).toList());
  }

  /**
   * Makes, in the suite's shared database, role {@code it_nobody}, which has no grants at all, and
   * a read-only token for it, unless they are there; returns the token.
   */
  public static String nobody(SharedInfra infra) throws java.sql.SQLException {
    String token = "tmk_itNobodyToken000000000000000000";
    try (java.sql.Connection conn = ServiceHarness.jdbc(infra)) {
      conn.createStatement().execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'it_nobody') "
          + "THEN CREATE ROLE it_nobody LOGIN; END IF; END $$");
      conn.createStatement().execute("INSERT INTO tidemark.api_token(name, token_hash, pg_role, access) VALUES "
          + "('it-nobody', encode(sha256('" + token + "'::bytea), 'hex'), 'it_nobody', 'read-only') ON CONFLICT (name) DO NOTHING");
    }
    return token;
  }
}
