package dev.tidemark.testsupport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** The examples of the pages under docs/, for the tests that check a page shows what Tidemark does. */
public final class DocExamples {

  private DocExamples() {}

  /** The project's root: a module's tests run in the module's folder, beside docs/ only at the root. */
  public static Path root() {
    Path here = Path.of("").toAbsolutePath();
    return Files.isDirectory(here.resolve("docs")) ? here : here.getParent();
  }

  /** The first JSON block of docs/{@code page} after the text {@code after}. */
  public static JsonObject jsonExample(String page, String after) {
    String text;
    try {
      text = Files.readString(root().resolve("docs").resolve(page), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int at = text.indexOf(after);
    assertTrue(at >= 0, page + " has no " + after);
    int start = text.indexOf("```json", at) + "```json".length();
    return new JsonObject(text.substring(start, text.indexOf("```", start)));
  }
}
