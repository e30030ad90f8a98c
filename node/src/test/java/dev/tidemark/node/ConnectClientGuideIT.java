package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every host configuration in docs/guides/connect-a-client.md, connected with its own URL and header to a running node. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConnectClientGuideIT {

  private static final Path GUIDE = Path.of("..", "docs", "guides", "connect-a-client.md");
  private static final String DOC_URL = "http://127.0.0.1:8080/mcp";
  /** What the examples write in place of the token: a literal, or the variable each host expands. */
  private static final Pattern PLACEHOLDER = Pattern.compile("tmk_your_token|\\$\\{TIDEMARK_TOKEN\\}|\\$\\{input:tidemark-token\\}");

  private TidemarkNode node;

  @BeforeAll
  void start(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    node = TestNodes.startAlone(infra, "gateway,query", Map.of());
  }

  @AfterAll
  void stop() {
    TestNodes.stop(node);
  }

  /** A URL and an Authorization header, as one example gives them. */
  record Connection(String where, String url, String authorization) {}

  static List<String> blocks(String markdown, String language) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL).matcher(markdown);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  static List<Connection> connections(String markdown) {
    List<Connection> out = new ArrayList<>();
    for (String sh : blocks(markdown, "sh")) {
      Matcher m = Pattern.compile("(http://\\S+) --header \"Authorization: ([^\"]+)\"").matcher(sh);
      assertTrue(m.find(), "a claude mcp add line with a URL and a header: " + sh);
      out.add(new Connection("claude mcp add", m.group(1), m.group(2)));
    }
    for (String json : blocks(markdown, "json")) {
      JsonObject config = new JsonObject(json);
      JsonObject servers = config.containsKey("servers") ? config.getJsonObject("servers") : config.getJsonObject("mcpServers");
      JsonObject server = servers.getJsonObject("tidemark");
      if (server.containsKey("url")) {
        out.add(new Connection(json, server.getString("url"), server.getJsonObject("headers").getString("Authorization")));
      } else {
        // a stdio bridge: the URL among its arguments, the header from its environment
        JsonArray args = server.getJsonArray("args");
        String url = args.stream().map(String::valueOf).filter(a -> a.startsWith("http")).findFirst().orElseThrow();
        out.add(new Connection(json, url, server.getJsonObject("env").getString("AUTH_HEADER")));
      }
    }
    return out;
  }

  @Test
  void everyHostConfigurationOfTheGuideConnectsWithItsUrlAndHeader() throws Exception {
    List<Connection> examples = connections(Files.readString(GUIDE));
    assertEquals(5, examples.size(), "Claude Code twice, VS Code, Cursor and Claude Desktop: " + examples);
    for (Connection example : examples) {
      assertTrue(example.url().startsWith(DOC_URL), example.where());
      Matcher bearer = Pattern.compile("Bearer (" + PLACEHOLDER.pattern() + ")").matcher(example.authorization());
      assertTrue(bearer.matches(), "a bearer header with the token's placeholder: " + example.authorization());
      String url = TestNodes.mcpUrl(node) + example.url().substring(DOC_URL.length());
      try (McpHttpClient c = new McpHttpClient(url, TestNodes.READ_ONLY_TOKEN)) {
        c.initialize();
        JsonArray tools = c.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools");
        assertTrue(tools.size() > 0, example.where());
      }
    }
  }

  @Test
  void theGuidesTroubleshootingMessagesAreTheOnesTidemarkSends() throws Exception {
    String guide = Files.readString(GUIDE);
    try (McpHttpClient none = new McpHttpClient(TestNodes.mcpUrl(node), null);
        McpHttpClient wrong = new McpHttpClient(TestNodes.mcpUrl(node), "tmk_notATokenOfThisInstallation00000000")) {
      for (McpHttpClient c : List.of(none, wrong)) {
        McpHttpClient.Reply r = c.post(c.request("ping", null));
        assertEquals(401, r.status());
        String message = r.json().getJsonObject("error").getString("message");
        String start = message.split("[:.]")[0];
        assertTrue(guide.contains(start), "the guide names \"" + start + "\"");
      }
    }
  }
}
