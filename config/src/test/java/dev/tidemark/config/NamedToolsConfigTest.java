package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** database.tools, database.toolsets, database.consumers and database.tools-file, as the file and the environment give them. */
class NamedToolsConfigTest {

  @TempDir
  Path dir;

  private Path file(String yaml) throws Exception {
    return ConfigLoaderTest.yamlFile(dir, yaml);
  }

  @Test
  void theFileGivesToolsAsYamlAndTheEnvironmentAsJson() throws Exception {
    TidemarkConfig fromFile = ConfigLoader.load(file("""
        database:
          tools:
            - {name: open_tickets, kind: read, statement: SELECT 1, roles: [r]}
          toolsets:
            support: [open_tickets, status]
        databases:
          - {name: sales, url: "postgresql://db:5432/sales"}
        """), Map.of(), Map.of());
    JsonObject section = fromFile.database().namedTools();
    assertEquals("open_tickets", section.getJsonArray("tools").getJsonObject(0).getString("name"));
    assertEquals(new JsonArray().add("open_tickets").add("status"), section.getJsonObject("toolsets").getJsonArray("support"));
    assertEquals(new JsonObject(), fromFile.forDatabase("sales").database().namedTools(), "a further database never takes the default's tools");
    TidemarkConfig fromEnv = ConfigLoader.load(null, Map.of("TIDEMARK_DATABASE_CONSUMERS",
        "[{\"name\":\"triage\",\"reactions\":[\"close_ticket\"]}]"), Map.of());
    assertEquals("triage", fromEnv.database().namedTools().getJsonArray("consumers").getJsonObject(0).getString("name"));
  }

  @Test
  void aValueThatIsNoListOfEntriesStopsTheStartNamingTheKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ConfigLoader.load(null, Map.of("TIDEMARK_DATABASE_TOOLS", "{\"name\":\"x\"}"), Map.of()));
    assertTrue(e.getMessage().contains("database.tools") && e.getMessage().contains("JSON array"), e.getMessage());
  }

  @Test
  void aToolsFileAndInlineToolsTogetherAreRefused() throws Exception {
    Path tools = dir.resolve("tools.yaml");
    Files.writeString(tools, "tools: []\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ConfigLoader.load(file(
        "database:\n  tools-file: " + tools + "\n  tools: [{name: x}]\n"), Map.of(), Map.of()));
    assertTrue(e.getMessage().contains("database.tools ") && e.getMessage().contains("database.tools-file"), e.getMessage());
    assertEquals(tools.toString(), ConfigLoader.load(file("database.tools-file: " + tools + "\n"), Map.of(), Map.of()).database().toolsFile());
  }
}
