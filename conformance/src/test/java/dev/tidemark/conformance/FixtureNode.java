package dev.tidemark.conformance;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.node.TidemarkNode;
import dev.tidemark.testsupport.SharedInfra;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A node with the conformance fixtures, on the suite's shared PostgreSQL and Kafka. */
final class FixtureNode {

  static final String DATABASE = "tidemark_conformance";
  static final String READ_WRITE_TOKEN = "tmk_conformanceReadWrite00000000000";

  private FixtureNode() {}

  static TidemarkNode start(SharedInfra infra) throws Exception {
    prepare(infra);
    String url = infra.postgres().url(DATABASE);
    return ConformanceServer.startNode(url, infra.postgres().user(), infra.postgres().password(), infra.kafkaBootstrapServers(), 0)
        .toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  /**
   * A node without the fixtures and with authentication on, as production runs, so that
   * {@link #READ_WRITE_TOKEN} sees the change tools (the fixtures' node serves an anonymous reader).
   */
  static TidemarkNode startWithAuth(SharedInfra infra) throws Exception {
    prepare(infra);
    Map<ConfigKey, String> v = ConformanceServer.nodeConfig(infra.postgres().url(DATABASE), infra.postgres().user(),
        infra.postgres().password(), infra.kafkaBootstrapServers(), 0);
    return TidemarkNode.start(TidemarkConfig.from(v)).toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  private static void prepare(SharedInfra infra) throws Exception {
    infra.postgres().createDatabaseIfMissing(DATABASE);
    String url = infra.postgres().url(DATABASE);
    ConformanceServer.prepare(url, infra.postgres().user(), infra.postgres().password(), READ_WRITE_TOKEN);
  }

  /** The suite's DNS-rebinding check needs a localhost URL. */
  static String url(TidemarkNode node) {
    return "http://localhost:" + node.httpPort() + "/mcp";
  }
}
