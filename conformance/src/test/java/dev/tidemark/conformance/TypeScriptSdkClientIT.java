package dev.tidemark.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.node.TidemarkNode;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpClients;
import dev.tidemark.testsupport.SharedInfra;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The official TypeScript SDK client (StreamableHTTPClientTransport) against a real node. */
@ExtendWith(InfraExtension.class)
class TypeScriptSdkClientIT {

  @Test
  void theSdkClientConnectsCallsSubscribesHearsAnUpdateAndEndsItsSession(SharedInfra infra) throws Exception {
    McpClients.install();
    TidemarkNode node = FixtureNode.start(infra);
    try {
      McpClients.Run run = McpClients.node(List.of("sdk-client.mjs", FixtureNode.url(node), "status",
          "test://watched-resource", "test_trigger_update"), 120);
      System.out.println(run.output());
      assertEquals(0, run.exitCode(), run.output());
      assertTrue(run.output().contains("\"step\":\"connected\",\"value\":{\"protocol\":\"2025-11-25\",\"session\":true"), run.output());
      assertTrue(run.output().contains("\"step\":\"called\",\"value\":{\"tool\":\"status\",\"structured\":true"), run.output());
      assertTrue(run.output().contains("\"step\":\"updated\",\"value\":\"test://watched-resource\""), run.output());
      assertTrue(run.output().trim().endsWith("OK"), run.output());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /** Every code a client can provoke on the demo database; UNAVAILABLE, CONFLICT, CURSOR_EXPIRED and INTERNAL need a failure of Tidemark's own parts or a race. */
  static final List<String> PROVOKED = List.of("INVALID_ARGUMENTS", "NOT_FOUND", "READ_ONLY", "PERMISSION_DENIED", "TIMEOUT",
      "LIMIT_EXCEEDED", "INVALID_CURSOR", "CURSOR_STALE", "INVALID_PLAN", "PLAN_CHANGED", "IDEMPOTENCY_CONFLICT",
      "DECISION_REQUIRED", "CONSTRAINT_VIOLATION", "TRANSACTION_STATEMENT");

  @Test
  void theSdkClientsCallToolDeliversEveryToolErrorWithItsCodeAndMessage(SharedInfra infra) throws Exception {
    String output = runWithAuth(infra, "errors");
    for (String code : PROVOKED) {
      assertTrue(output.contains("\"step\":\"error\",\"value\":{\"code\":\"" + code + "\""), code + " not delivered:\n" + output);
    }
  }

  /** Runs sdk-client.mjs in {@code mode} against a node with authentication on, as the read-write caller; its output, once it ended with OK. */
  private static String runWithAuth(SharedInfra infra, String mode) throws Exception {
    McpClients.install();
    TidemarkNode node = FixtureNode.startWithAuth(infra);
    try {
      McpClients.Run run = McpClients.node(List.of("sdk-client.mjs", mode, FixtureNode.url(node), FixtureNode.READ_WRITE_TOKEN), 150);
      System.out.println(run.output());
      assertEquals(0, run.exitCode(), run.output());
      assertTrue(run.output().trim().endsWith("OK"), run.output());
      return run.output();
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get();
    }
  }

  /** Every kind of watch result the tools alone can provoke passes the SDK's check against watch's outputSchema. */
  @Test
  void theSdkClientAcceptsEveryWatchResultAgainstItsOutputSchema(SharedInfra infra) throws Exception {
    String output = runWithAuth(infra, "watch");
    for (String kind : List.of("snapshot", "checkpoint", "patch", "reset")) {
      assertTrue(output.contains("\"step\":\"watch\",\"value\":{\"kind\":\"" + kind + "\""), kind + " not seen:\n" + output);
    }
  }
}
