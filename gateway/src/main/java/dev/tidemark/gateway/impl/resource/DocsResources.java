package dev.tidemark.gateway.impl.resource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The reference pages served as {@code tidemark://docs/{topic}}, bundled from docs/reference at build time. */
public final class DocsResources {

  public static final List<String> TOPICS = List.of("tools", "errors", "types", "http");

  private DocsResources() {}

  /** The page's markdown, or null for a topic that is not served. */
  public static String read(String topic) {
    if (!TOPICS.contains(topic)) {
      return null;
    }
    try (InputStream in = DocsResources.class.getResourceAsStream("/dev/tidemark/gateway/docs/" + topic + ".md")) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return null;
    }
  }
}
