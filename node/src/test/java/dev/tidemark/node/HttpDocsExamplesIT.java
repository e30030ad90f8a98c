package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.RawHttp;
import dev.tidemark.testsupport.SharedInfra;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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

/**
 * Replays every example of docs/reference/http.md against a real node and fails when the output
 * differs. An example is a fenced block marked {@code http-example}: a {@code curl} command (lines
 * starting with {@code $ }, continued with a trailing backslash), then the expected output: the
 * status line, the headers that matter (each must be present with this value; others are ignored),
 * an empty line and the body. The examples run in page order against one node; {@code $TOKEN} is a
 * read-write token and {@code $SESSION} the session id the last answer that carried
 * {@code Mcp-Session-Id} issued. Placeholders in the expected output stand for volatile values:
 * {@code <session-id>} (32 hexadecimal characters), {@code <n>} (digits) and {@code <any>} (any
 * text within one JSON string or header value). Trailing blanks on a line are ignored.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpDocsExamplesIT {

  private static final Path PAGE = projectRoot().resolve("docs/reference/http.md");
  private static final Pattern BLOCK = Pattern.compile("```http-example\\n(.*?)```", Pattern.DOTALL);

  private TidemarkNode node;

  @BeforeAll
  void start(SharedInfra infra) {
    TestNodes.prepareDatabase(infra);
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", Map.of());
  }

  @AfterAll
  void stop() {
    TestNodes.stop(node);
  }

  private static Path projectRoot() {
    Path here = Path.of("").toAbsolutePath();
    return Files.isDirectory(here.resolve("docs")) ? here : here.getParent();
  }

  @Test
  void everyExampleOfTheHttpPageGivesTheOutputThePageShows() throws Exception {
    String page = Files.readString(PAGE, StandardCharsets.UTF_8);
    Matcher m = BLOCK.matcher(page);
    List<String> failures = new ArrayList<>();
    String session = "";
    int examples = 0;
    while (m.find()) {
      examples++;
      Example example = Example.parse(m.group(1));
      List<String> args = shellWords(example.command, session);
      RawHttp.Response response = run(args);
      String actual = render(response, example.expectedHeaders());
      if (!matches(example.expected, actual)) {
        failures.add("example " + examples + " (" + example.command + ")\n--- the page shows:\n" + example.expected
            + "\n--- the node answered:\n" + actual);
      }
      String issued = response.header("Mcp-Session-Id");
      if (issued != null) {
        session = issued;
      }
    }
    assertTrue(examples >= 8, "the page has " + examples + " examples");
    failures.forEach(System.out::println);
    assertTrue(failures.isEmpty(), failures.size() + " of " + examples + " examples differ:\n" + String.join("\n\n", failures));
  }

  // ---- the page's examples ----

  private record Example(String command, String expected) {

    static Example parse(String block) {
      StringBuilder command = new StringBuilder();
      List<String> lines = block.lines().toList();
      int i = 0;
      if (!lines.get(0).startsWith("$ ")) {
        throw new AssertionError("an http-example starts with '$ curl ...': " + block);
      }
      String line = lines.get(i).substring(2);
      while (true) {
        if (line.endsWith("\\")) {
          command.append(line, 0, line.length() - 1).append(' ');
          line = lines.get(++i).trim();
        } else {
          command.append(line);
          break;
        }
      }
      String expected = String.join("\n", lines.subList(i + 1, lines.size()));
      return new Example(command.toString().trim(), expected);
    }

    /** The header names the expected output lists, between the status line and the empty line. */
    List<String> expectedHeaders() {
      List<String> names = new ArrayList<>();
      List<String> lines = expected.lines().toList();
      for (int i = 1; i < lines.size() && !lines.get(i).isBlank(); i++) {
        names.add(lines.get(i).substring(0, lines.get(i).indexOf(':')));
      }
      return names;
    }
  }

  /** Splits a command as a POSIX shell would, for the quoting the page uses; $TOKEN and $SESSION expand in double quotes. */
  static List<String> shellWords(String command, String session) {
    return shellWords(command, Map.of("$TOKEN", TestNodes.READ_WRITE_TOKEN, "$SESSION", session));
  }

  /** Splits a command as a POSIX shell would, for single and double quotes; each of {@code variables} expands in double quotes. */
  static List<String> shellWords(String command, Map<String, String> variables) {
    List<String> words = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    boolean inWord = false;
    for (int i = 0; i < command.length(); i++) {
      char c = command.charAt(i);
      if (c == '\'') {
        int end = command.indexOf('\'', i + 1);
        word.append(command, i + 1, end);
        i = end;
        inWord = true;
      } else if (c == '"') {
        int end = command.indexOf('"', i + 1);
        String quoted = command.substring(i + 1, end);
        for (Map.Entry<String, String> v : variables.entrySet()) {
          quoted = quoted.replace(v.getKey(), v.getValue());
        }
        word.append(quoted);
        i = end;
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          words.add(word.toString());
          word.setLength(0);
          inWord = false;
        }
      } else {
        word.append(c);
        inWord = true;
      }
    }
    if (inWord) {
      words.add(word.toString());
    }
    return words;
  }

  /** Runs a curl command the way curl would send it: its default Accept, and a form content type for -d without one. */
  private RawHttp.Response run(List<String> args) throws Exception {
    return run(args, node.httpPort());
  }

  /** As {@link #run(List)}, against the node on {@code port}; the command addresses http://127.0.0.1:8080. */
  static RawHttp.Response run(List<String> args, int port) throws Exception {
    if (!args.get(0).equals("curl")) {
      throw new AssertionError("examples are curl commands: " + args);
    }
    String method = null;
    String url = null;
    String data = null;
    List<String[]> headers = new ArrayList<>();
    for (int i = 1; i < args.size(); i++) {
      String a = args.get(i);
      switch (a) {
        case "-s", "-i", "-si", "-is", "-N", "-sN", "-siN" -> { }
        case "-X" -> method = args.get(++i);
        case "-H" -> {
          String h = args.get(++i);
          headers.add(new String[] {h.substring(0, h.indexOf(':')).trim(), h.substring(h.indexOf(':') + 1).trim()});
        }
        case "-d", "--data", "--data-raw", "--data-binary" -> data = args.get(++i);
        default -> {
          if (a.startsWith("-")) {
            throw new AssertionError("the examples use only -s, -i, -N, -X, -H and -d: " + a);
          }
          url = a;
        }
      }
    }
    if (method == null) {
      method = data == null ? "GET" : "POST";
    }
    if (headers.stream().noneMatch(h -> h[0].equalsIgnoreCase("Accept"))) {
      headers.add(new String[] {"Accept", "*/*"});
    }
    if (data != null && headers.stream().noneMatch(h -> h[0].equalsIgnoreCase("Content-Type"))) {
      headers.add(new String[] {"Content-Type", "application/x-www-form-urlencoded"});
    }
    String prefix = "http://127.0.0.1:8080";
    if (url == null || !url.startsWith(prefix)) {
      throw new AssertionError("examples address http://127.0.0.1:8080: " + url);
    }
    byte[] body = data == null ? null : data.getBytes(StandardCharsets.UTF_8);
    try {
      return RawHttp.exchange(port, method, url.substring(prefix.length()), headers, body, false, -1, 10_000);
    } catch (IOException e) {
      throw new AssertionError("the example's request failed: " + args, e);
    }
  }

  /** The answer as the page writes it: status line, the headers the page lists (in its order), empty line, body. */
  private static String render(RawHttp.Response response, List<String> headerNames) {
    StringBuilder out = new StringBuilder("HTTP/1.1 ").append(response.status()).append(' ').append(response.reason()).append('\n');
    for (String name : headerNames) {
      String value = response.header(name);
      out.append(name).append(": ").append(value == null ? "(absent)" : value).append('\n');
    }
    out.append('\n').append(response.bodyText().replace("\r\n", "\n"));
    return out.toString();
  }

  static boolean matches(String expected, String actual) {
    String e = normalise(expected);
    String a = normalise(actual);
    StringBuilder regex = new StringBuilder();
    Matcher p = Pattern.compile("<session-id>|<n>|<any>").matcher(e);
    int last = 0;
    while (p.find()) {
      regex.append(Pattern.quote(e.substring(last, p.start())));
      regex.append(switch (p.group()) {
        case "<session-id>" -> "[0-9a-f]{32}";
        case "<n>" -> "[0-9]+";
        default -> "[^\"\\n]*";
      });
      last = p.end();
    }
    regex.append(Pattern.quote(e.substring(last)));
    return Pattern.compile(regex.toString(), Pattern.DOTALL).matcher(a).matches();
  }

  private static String normalise(String text) {
    return String.join("\n", text.lines().map(String::stripTrailing).toList()).strip();
  }
}
