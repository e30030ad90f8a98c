package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** docs/reference/tools.md is generated from the tool contract; this fails when the committed page differs. */
class ToolsPageTest {

  @Test
  void toolsPageIsTheOneGeneratedFromTheToolContract() throws Exception {
    if (Boolean.getBoolean("tidemark.regenerate-docs")) {
      ToolsPage.write();
    }
    String committed = Files.readString(ToolsPage.file(), StandardCharsets.UTF_8);
    assertEquals(ToolsPage.render(), committed,
        "docs/reference/tools.md differs from the tool contract; regenerate it with: ./mvnw -q -pl node -am test "
            + "-Dtest=ToolsPageTest -Dtidemark.regenerate-docs=true -Dsurefire.failIfNoSpecifiedTests=false");
  }
}
