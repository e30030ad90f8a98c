package dev.tidemark.conformance;

import dev.tidemark.contract.config.ConfigKey;
import dev.tidemark.contract.config.TidemarkConfig;
import dev.tidemark.node.Pools;
import dev.tidemark.node.TidemarkNode;
import dev.tidemark.node.dev.DevSetup;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.Vertx;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A node with the conformance fixtures, on the suite's shared PostgreSQL and Kafka. */
final class FixtureNode {

  static final String DATABASE = "tidemark_conformance";

  private FixtureNode() {}

  static TidemarkNode start(SharedInfra infra) throws Exception {
    infra.postgres().createDatabaseIfMissing(DATABASE);
    String url = infra.postgres().url(DATABASE);
    ConformanceServer.prepare(url, infra.postgres().user(), infra.postgres().password())
        .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
    return ConformanceServer.startNode(url, infra.postgres().user(), infra.postgres().password(), infra.kafkaBootstrapServers(), 0)
        .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  /** The suite's DNS-rebinding check needs a localhost URL. */
  static String url(TidemarkNode node) {
    return "http://localhost:" + node.httpPort() + "/mcp";
  }
}
