package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.McpClients;
import dev.tidemark.testsupport.McpHttpClient;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The worker of docs/guides/background-agents.md, taken from the page as it stands, run with the
 * official TypeScript SDK against {@code tidemark dev}: it handles the orders placed, once each.
 */
class BackgroundAgentsGuideIT {

  private static final Path GUIDE = Path.of("..", "docs", "guides", "background-agents.md");
  private static final int ORDERS = 3;

  static String worker(String guide) {
    Matcher m = Pattern.compile("```js\\n(// worker\\.mjs.*?)```", Pattern.DOTALL).matcher(guide);
    assertTrue(m.find(), "the guide holds the worker as a js block starting with // worker.mjs");
    return m.group(1);
  }

  @Test
  void theGuidesWorkerHandlesEachNewOrderOnceAgainstDevMode() throws Exception {
    McpClients.install();
    Path script = McpClients.DIR.resolve(".guide").resolve("worker.mjs");
    Files.createDirectories(script.getParent());
    Files.writeString(script, worker(Files.readString(GUIDE)));

    DevModeIT.Dev dev = DevModeIT.start(List.of());
    try {
      // the consumer is made first, with the worker's own settings, so that the orders below are
      // committed after its creation: a consumer receives what is committed from then on
      try (McpHttpClient c = new McpHttpClient(dev.value("Tidemark ready"), dev.value("Token"))) {
        c.initialize();
        JsonObject made = c.callTool("events_next", new JsonObject().put("consumer", "order-follow-up")
            .put("tables", new JsonArray().add("orders")).put("max", 10).put("wait_ms", 0));
        assertEquals(true, made.getJsonObject("structuredContent").getBoolean("created"), made.encode());
      }
      List<Long> orders = new ArrayList<>();
      try (Connection pg = DevModeIT.psql(dev); Statement st = pg.createStatement()) {
        for (int i = 0; i < ORDERS; i++) {
          try (ResultSet rs = st.executeQuery("INSERT INTO orders (customer_id, placed_at, total) VALUES (1, now(), 12.50) RETURNING id")) {
            rs.next();
            orders.add(rs.getLong(1));
          }
        }
      }

      ProcessBuilder pb = new ProcessBuilder(McpClients.NODE.toString(), script.toString()).directory(McpClients.DIR.toFile())
          .redirectErrorStream(true);
      pb.environment().put("TIDEMARK_URL", dev.value("Tidemark ready"));
      pb.environment().put("TIDEMARK_TOKEN", dev.value("Token"));
      pb.environment().put("WORKER_STOP_AFTER", String.valueOf(ORDERS));
      Process worker = pb.start();
      boolean ended = worker.waitFor(120, TimeUnit.SECONDS);
      String output = new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!ended) {
        worker.destroyForcibly();
      }
      assertTrue(ended, "the worker stops after " + ORDERS + " events:\n" + output);
      assertEquals(0, worker.exitValue(), output);
      for (long id : orders) {
        assertTrue(output.contains("\"order\":[" + id + "]"), "order " + id + " handled:\n" + output);
      }
      try (Connection pg = DevModeIT.psql(dev); Statement st = pg.createStatement();
          ResultSet rs = st.executeQuery("SELECT order_id, count(*) FROM support_tickets WHERE subject LIKE 'Follow up on order %'"
              + " GROUP BY order_id ORDER BY order_id")) {
        List<Long> followedUp = new ArrayList<>();
        while (rs.next()) {
          assertEquals(1, rs.getInt(2), "one ticket for order " + rs.getLong(1));
          followedUp.add(rs.getLong(1));
        }
        assertEquals(orders, followedUp, "a follow-up ticket for each new order, and none for the others");
      }
    } finally {
      DevModeIT.stop(dev);
    }
  }
}
