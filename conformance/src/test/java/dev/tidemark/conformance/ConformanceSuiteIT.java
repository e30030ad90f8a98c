package dev.tidemark.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.node.TidemarkNode;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The official MCP conformance suite, every active server scenario, against a node with its fixtures. */
@ExtendWith(InfraExtension.class)
class ConformanceSuiteIT {

  @Test
  void everyActiveServerScenarioPasses(SharedInfra infra) throws Exception {
    McpClients.install();
    TidemarkNode node = FixtureNode.start(infra);
    try {
      McpClients.Run run = McpClients.node(List.of("node_modules/@modelcontextprotocol/conformance/dist/index.js",
          "server", "--url", FixtureNode.url(node), "--suite", "active"), 600);
      System.out.println(run.output());
      Matcher total = Pattern.compile("Total: (\\d+) passed, (\\d+) failed").matcher(run.output());
      assertTrue(total.find(), "the suite printed its summary:\n" + run.output());
      assertEquals("0", total.group(2), "failed checks:\n" + run.output());
      long passedScenarios = run.output().lines().filter(l -> l.startsWith("✓ ")).count();
      long failedScenarios = run.output().lines().filter(l -> l.startsWith("✗ ")).count();
      assertEquals(0, failedScenarios, run.output());
      assertTrue(passedScenarios >= 30, "every one of the 30 active scenarios ran and passed, saw " + passedScenarios);
      assertEquals(0, run.exitCode(), run.output());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get();
    }
  }
}
