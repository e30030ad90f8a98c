package dev.tidemark.node.shipped;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The commands of a guide as a test replays them: every {@code bash} block in order, the one marked {@code <!-- env -->}
 * (where the reader says where their servers are) replaced by the test's own; the files the guide tells the reader to
 * save ({@code <!-- file: NAME -->} before a block); and the output it shows ({@code text} blocks).
 */
final class GuideScript {

  private static final Pattern BLOCK = Pattern.compile("(<!-- (env|file: ([^ ]+)) -->\\n)?```(\\w+)\\n(.*?)```", Pattern.DOTALL);

  private GuideScript() {}

  /** The bash blocks of {@code markdown}, the environment block replaced by {@code env}; fails when it has none or two. */
  static String bash(String markdown, String env) {
    StringBuilder out = new StringBuilder();
    int envBlocks = 0;
    Matcher m = BLOCK.matcher(markdown);
    while (m.find()) {
      if (!"bash".equals(m.group(4))) {
        continue;
      }
      if ("env".equals(m.group(2))) {
        envBlocks++;
        out.append("# the guide's environment, as the test sets it\n").append(env).append('\n');
      } else {
        out.append(m.group(5)).append('\n');
      }
    }
    if (envBlocks != 1) {
      throw new IllegalStateException("a guide has exactly one <!-- env --> block; this one has " + envBlocks);
    }
    return out.toString();
  }

  /** The blocks marked as files to save, by name. */
  static Map<String, String> files(String markdown) {
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m = BLOCK.matcher(markdown);
    while (m.find()) {
      if (m.group(3) != null) {
        out.put(m.group(3), m.group(5));
      }
    }
    return out;
  }

  /** The output the guide shows, block by block. */
  static List<String> outputs(String markdown) {
    List<String> out = new ArrayList<>();
    Matcher m = BLOCK.matcher(markdown);
    while (m.find()) {
      if ("text".equals(m.group(4))) {
        out.add(m.group(5).strip());
      }
    }
    return out;
  }
}
