package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.config.ConfigKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the docs equal to the code they describe: every config key, error code and tool
 * argument is documented, and no link points nowhere. Pure file checks; no servers.
 */
class DocsTest {

  static final Path ROOT = projectRoot();
  private static final Path DOCS = ROOT.resolve("docs");

  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");

  @Test
  void configurationPageListsEveryConfigKeyOnceWithItsEnvironmentVariableAndDefault() {
    List<List<String>> rows = tableRows(read(DOCS.resolve("configuration.md")), "Key", "Environment variable", "Default", "Meaning");
    Map<String, List<String>> byKey = new LinkedHashMap<>();
    List<String> duplicates = new ArrayList<>();
    for (List<String> row : rows) {
      String key = unquote(row.get(0));
      if (byKey.put(key, row) != null) {
        duplicates.add(key);
      }
    }
    assertTrue(duplicates.isEmpty(), "keys listed more than once in docs/configuration.md: " + duplicates);

    Set<String> declared = Arrays.stream(ConfigKey.values()).map(ConfigKey::key).collect(Collectors.toCollection(LinkedHashSet::new));
    Set<String> unknown = new LinkedHashSet<>(byKey.keySet());
    unknown.removeAll(declared);
    assertTrue(unknown.isEmpty(), "docs/configuration.md lists keys that ConfigKey lacks: " + unknown);
    Set<String> missing = new LinkedHashSet<>(declared);
    missing.removeAll(byKey.keySet());
    assertTrue(missing.isEmpty(), "docs/configuration.md lacks keys: " + missing);

    for (ConfigKey key : ConfigKey.values()) {
      List<String> row = byKey.get(key.key());
      assertEquals(key.envName(), unquote(row.get(1)), "environment variable of " + key.key());
      // an empty default is written as an empty cell
      assertEquals(key.defaultValue(), unquote(row.get(2)), "default of " + key.key());
      assertFalse(row.get(3).isBlank(), "meaning of " + key.key());
    }
  }

  @Test
  void errorsPageNamesEveryErrorCodeOnceWithWhetherItIsRetriable() {
    List<List<String>> rows = tableRows(read(DOCS.resolve("reference/errors.md")), "code", "retriable", "meaning", "what to do");
    Map<String, String> retriable = new LinkedHashMap<>();
    for (List<String> row : rows) {
      String code = unquote(row.get(0));
      assertTrue(retriable.put(code, row.get(1)) == null, "error code listed twice: " + code);
    }
    for (ErrorCode code : ErrorCode.values()) {
      assertTrue(retriable.containsKey(code.code()), "docs/reference/errors.md lacks error code " + code.code());
      assertEquals(code.retriable() ? "yes" : "no", retriable.get(code.code()), "retriable of " + code.code());
    }
    Map<String, String> whatToDo = new LinkedHashMap<>();
    rows.forEach(row -> whatToDo.put(unquote(row.get(0)), row.get(3).replace("`", "")));
    for (ErrorCode code : ErrorCode.values()) {
      assertEquals(code.hint(), whatToDo.get(code.code()), "what to do of " + code.code() + " is its hint, word for word");
      assertFalse(code.hint().contains("administrator") || code.hint().contains("raise the limit"),
          code.code() + "'s hint suggests what only an operator can do");
    }
    Set<String> declared = Arrays.stream(ErrorCode.values()).map(ErrorCode::code).collect(Collectors.toSet());
    Set<String> unknown = new LinkedHashSet<>(retriable.keySet());
    unknown.removeAll(declared);
    assertTrue(unknown.isEmpty(), "docs/reference/errors.md lists codes that ErrorCode lacks: " + unknown);
  }

  /** The first JSON example of docs page {@code page} after the text {@code after}, for a test that checks what it shows. */
  static io.vertx.core.json.JsonObject jsonExample(String page, String after) {
    return dev.tidemark.testsupport.DocExamples.jsonExample(page, after);
  }

  @Test
  void toolsPageHasASectionForEveryToolNamingEachOfItsArguments() {
    List<String> lines = read(DOCS.resolve("reference/tools.md")).lines().toList();
    List<ToolDescriptor> tools = ToolCatalog.all();
    assertFalse(tools.isEmpty());
    for (ToolDescriptor tool : tools) {
      String section = section(lines, "`" + tool.name() + "`");
      assertTrue(section != null, "docs/reference/tools.md has no section headed `" + tool.name() + "`");
      for (String property : tool.inputSchema().getJsonObject("properties").fieldNames()) {
        assertTrue(section.contains("`" + property + "`"),
            "the section of " + tool.name() + " does not name its argument `" + property + "`");
      }
    }
  }

  @Test
  void everyRelativeLinkInTheDocsPointsToAFileThatExists() {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      for (String target : relativeLinks(page)) {
        String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
          broken.add(ROOT.relativize(page) + " -> " + target);
        }
      }
    }
    assertTrue(broken.isEmpty(), "links to missing files: " + broken);
  }

  @Test
  void everyLinkToAHeadingNamesAHeadingOfItsPage() {
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      for (String target : relativeLinks(page)) {
        int hash = target.indexOf('#');
        if (hash < 0) {
          continue;
        }
        String file = target.substring(0, hash);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (resolved.toString().endsWith(".md") && Files.exists(resolved)
            && !anchors(read(resolved)).contains(target.substring(hash + 1))) {
          broken.add(ROOT.relativize(page) + " -> " + target);
        }
      }
    }
    assertTrue(broken.isEmpty(), "links to missing headings: " + broken);
  }

  // ---- helpers ----

  /** The module directory is the working directory of the tests; the docs are one level up. */
  private static Path projectRoot() {
    return dev.tidemark.testsupport.DocExamples.root();
  }

  private static List<Path> pages() {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    try (Stream<Path> files = Files.walk(DOCS)) {
      files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return pages;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Link targets outside fenced code blocks that are neither absolute URLs nor mail addresses. */
  private static List<String> relativeLinks(Path page) {
    List<String> targets = new ArrayList<>();
    Matcher m = LINK.matcher(withoutCodeBlocks(read(page)));
    while (m.find()) {
      String target = m.group(1);
      if (!target.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*")) {
        targets.add(target);
      }
    }
    return targets;
  }

  private static String withoutCodeBlocks(String markdown) {
    StringBuilder out = new StringBuilder();
    boolean inFence = false;
    for (String line : markdown.lines().toList()) {
      if (line.trim().startsWith("```")) {
        inFence = !inFence;
      } else if (!inFence) {
        out.append(line).append('\n');
      }
    }
    return out.toString();
  }

  /** The anchors the page's headings get: lower case, punctuation other than '-' and '_' dropped, spaces as '-'. */
  private static Set<String> anchors(String markdown) {
    Set<String> anchors = new LinkedHashSet<>();
    for (String line : withoutCodeBlocks(markdown).lines().toList()) {
      Matcher m = HEADING.matcher(line);
      if (m.matches()) {
        anchors.add(m.group(2).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-'));
      }
    }
    return anchors;
  }

  /** The text from the heading whose title is {@code title} to the next heading of the same or a higher level. */
  private static String section(List<String> lines, String title) {
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = HEADING.matcher(lines.get(i));
      if (m.matches() && m.group(2).equals(title)) {
        int level = m.group(1).length();
        StringBuilder body = new StringBuilder();
        for (int j = i + 1; j < lines.size(); j++) {
          Matcher next = HEADING.matcher(lines.get(j));
          if (next.matches() && next.group(1).length() <= level) {
            break;
          }
          body.append(lines.get(j)).append('\n');
        }
        return body.toString();
      }
    }
    return null;
  }

  /** The body rows of the first table with exactly these column headers, each as trimmed cells. */
  private static List<List<String>> tableRows(String markdown, String... headers) {
    List<String> lines = markdown.lines().toList();
    List<String> wanted = List.of(headers);
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("|") && cells(lines.get(i)).equals(wanted)) {
        List<List<String>> rows = new ArrayList<>();
        for (int j = i + 2; j < lines.size() && lines.get(j).startsWith("|"); j++) {
          List<String> row = cells(lines.get(j));
          assertEquals(headers.length, row.size(), "cells in row: " + lines.get(j));
          rows.add(row);
        }
        return rows;
      }
    }
    throw new AssertionError("no table with columns " + wanted);
  }

  private static List<String> cells(String row) {
    String inner = row.trim();
    inner = inner.substring(1, inner.endsWith("|") ? inner.length() - 1 : inner.length());
    // "\|" is a pipe inside a cell, as GitHub's tables have it
    return Arrays.stream(inner.split("(?<!\\\\)\\|", -1)).map(String::trim).map(c -> c.replace("\\|", "|")).toList();
  }

  /** A cell's value without the backticks that format it as code. */
  private static String unquote(String cell) {
    return cell.length() >= 2 && cell.startsWith("`") && cell.endsWith("`") ? cell.substring(1, cell.length() - 1) : cell;
  }
}
