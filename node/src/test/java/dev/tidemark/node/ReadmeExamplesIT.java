package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.testsupport.RawHttp;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Replays the README's "What you see" against {@code tidemark.jar dev}, as a reader would: the
 * lines dev mode prints, then every {@code curl} command with the block that follows it as its
 * expected output. The values that differ per run (tokens, session ids, node ids, ports, the
 * start time and the changelog head) are masked on both sides; everything else must be equal.
 */
class ReadmeExamplesIT {

  private static final Path README = Path.of("..", "README.md");
  private static final Pattern BLOCK = Pattern.compile("```(\\w*)\\n(.*?)```", Pattern.DOTALL);
  private static final Pattern ASSIGNMENT = Pattern.compile("^([A-Z]+)=(\\S+)");

  /** Per-run values, each with the mark that replaces it on both sides. */
  private static final List<String[]> VOLATILE = List.of(
      new String[] {"\"changelog_head\":\"[A-Za-z0-9_-]+\"", "\"changelog_head\":\"<cursor>\""},
      new String[] {"\"changelog_lag_bytes\":[0-9]+", "\"changelog_lag_bytes\":<bytes>"},
      new String[] {"changelog_head [A-Za-z0-9_-]+", "changelog_head <cursor>"},
      new String[] {"capture [0-9]+ bytes behind", "capture <bytes> bytes behind"},
      new String[] {"tmk_[A-Za-z0-9_-]+", "<token>"},
      new String[] {"\\b[0-9a-f]{32}\\b", "<session-id>"},
      new String[] {"vm-[0-9a-z]+", "<node>"},
      new String[] {"127\\.0\\.0\\.1:[0-9]+", "127.0.0.1:<port>"},
      new String[] {"Started in [0-9]+ ms", "Started in <n> ms"});

  private record Block(String info, String text) {}

  static String mask(String text) {
    String out = String.join("\n", text.replace("\r\n", "\n").lines().map(String::stripTrailing).toList()).strip();
    for (String[] v : VOLATILE) {
      out = out.replaceAll(v[0], Matcher.quoteReplacement(v[1]));
    }
    return out;
  }

  @Test
  void theReadmesDevModeLinesAndCurlExamplesAreWhatDevModeAnswers() throws Exception {
    String readme = Files.readString(README, StandardCharsets.UTF_8);
    assertTrue(readme.contains("java -jar node/target/tidemark.jar dev"), "the README starts dev mode as this test does");
    List<Block> blocks = new ArrayList<>();
    Matcher m = BLOCK.matcher(readme);
    while (m.find()) {
      blocks.add(new Block(m.group(1), m.group(2)));
    }
    Block printed = blocks.stream().filter(b -> b.text().startsWith("Tidemark ready: ")).findFirst().orElseThrow();

    DevModeIT.Dev dev = DevModeIT.start(List.of());
    try {
      List<String> expectedLines = printed.text().lines().toList();
      assertEquals(mask(printed.text()), mask(String.join("\n", dev.raw().subList(0, expectedLines.size()))),
          "the lines dev mode prints");
      int port = URI.create(dev.value("Tidemark ready")).getPort();
      Map<String, String> variables = new HashMap<>(Map.of("$TOKEN", dev.value("Token")));
      int replayed = 0;
      for (int i = 0; i < blocks.size(); i++) {
        Block b = blocks.get(i);
        if (!b.info().equals("bash") || !b.text().contains("curl ")) {
          continue;
        }
        String command = commandOf(b.text());
        List<String> words = HttpDocsExamplesIT.shellWords(command, variables);
        RawHttp.Response response = HttpDocsExamplesIT.run(words, port);
        String expected = blocks.get(i + 1).text();
        assertEquals(mask(expected), mask(render(response, words.contains("-si") || words.contains("-i"))), command);
        String session = response.header("Mcp-Session-Id");
        if (session != null) {
          variables.put("$SESSION", session);
        }
        replayed++;
      }
      assertTrue(replayed >= 2, "the README has " + replayed + " curl examples");
      Matcher counts = Pattern.compile("serves (\\d+) tools; .*?the read-write\\s+caller of dev mode (\\d+), its read-only caller (\\d+)",
          Pattern.DOTALL).matcher(readme);
      assertTrue(counts.find(), "the README says how many tools each caller sees");
      assertEquals(Integer.parseInt(counts.group(1)), ToolCatalog.all().size(), "tools served in all");
      assertEquals(Integer.parseInt(counts.group(2)), toolCount(dev.value("Tidemark ready"), dev.value("Token")), "the read-write caller's tools");
      assertEquals(Integer.parseInt(counts.group(3)), toolCount(dev.value("Tidemark ready"), dev.value("Read-only token")),
          "the read-only caller's tools");
      assertNotNull(variables.get("$SESSION"), "the README's initialize example issued a session");
    } finally {
      DevModeIT.stop(dev);
    }
  }

  private static int toolCount(String url, String token) {
    try (dev.tidemark.testsupport.McpHttpClient c = new dev.tidemark.testsupport.McpHttpClient(url, token)) {
      c.initialize();
      return c.rpc("tools/list", new io.vertx.core.json.JsonObject()).getJsonObject("result").getJsonArray("tools").size();
    }
  }

  /** The curl command of a bash block: variable assignments (the reader's copy and paste) skipped, continuations joined. */
  private static String commandOf(String block) {
    StringBuilder command = new StringBuilder();
    for (String line : block.lines().toList()) {
      if (ASSIGNMENT.matcher(line).find()) {
        continue;
      }
      String t = line.strip();
      command.append(t.endsWith("\\") ? t.substring(0, t.length() - 1) : t).append(' ');
    }
    return command.toString().trim();
  }

  /** What curl prints: with -i the status line and every header in the order they came, an empty line, then the body. */
  private static String render(RawHttp.Response response, boolean withHeaders) {
    StringBuilder out = new StringBuilder();
    if (withHeaders) {
      out.append("HTTP/1.1 ").append(response.status()).append(' ').append(response.reason()).append('\n');
      for (String[] h : response.headers()) {
        if (h[0].equalsIgnoreCase("connection")) {
          continue; // RawHttp asks to close after one answer; curl keeps the connection, so it sees no such header
        }
        out.append(h[0]).append(": ").append(h[1]).append('\n');
      }
      out.append('\n');
    }
    return out.append(response.bodyText()).toString();
  }
}
