package dev.tidemark.node.dev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.NamedCatalog;
import dev.tidemark.contract.NamedTool;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.database.schema.Migrator;
import dev.tidemark.node.tools.NamedToolsLoader;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What {@code tools/list} costs the read-write caller of dev mode, who sees every built-in tool
 * but migrate and the demo database's named tools its role is given (close_ticket as the
 * reaction of the demo's consumer), counting a token as four characters of compact JSON, as
 * contract's ToolListBudgetTest counts the built-in tools alone. docs/performance.md records the figures.
 */
class DevToolListBudgetTest {

  static final int MODEL_TOKENS = 2_500;
  static final int FULL_TOKENS = 6_000;

  @Test
  void theReadWriteCallerOfDevModeSeesTheBuiltInAndTheDemosNamedToolsWithinTheTokenBudget() {
    JsonObject section = NamedToolsLoader.parse(Buffer.buffer(Migrator.read("demo/tools.yaml")));
    Set<String> builtIns = ToolCatalog.all().stream().map(ToolDescriptor::name).collect(Collectors.toSet());
    NamedCatalog demo = NamedCatalog.assemble(NamedCatalog.parse(section, builtIns, "database."), Map.of(), builtIns);
    JsonArray seen = new JsonArray();
    JsonArray full = new JsonArray();
    ToolCatalog.all().stream().filter(t -> !t.name().equals(ToolCatalog.MIGRATE)).forEach(t -> add(t.toMcp(), seen, full));
    int named = 0;
    for (NamedTool tool : demo.tools()) {
      if (tool.roles().contains(DevSetup.WRITER_ROLE)) {
        add(tool.descriptor().toMcp(), seen, full);
        named++;
      }
    }
    assertEquals(4, named, "the demo gives the read-write caller four tools of its own");
    int model = tokens(seen.encode());
    int whole = tokens(new JsonObject().put("tools", full).encode());
    System.out.printf("tools/list for the read-write caller of dev mode: %d tools, %d tokens as a model sees them, %d in full%n",
        full.size(), model, whole);
    assertTrue(model <= MODEL_TOKENS, "name, description and inputSchema of every tool cost " + model + " tokens, more than " + MODEL_TOKENS);
    assertTrue(whole <= FULL_TOKENS, "tools/list costs " + whole + " tokens in full, more than " + FULL_TOKENS);
  }

  /** A model reads each tool's name, description and input schema; the full answer adds titles, annotations and output schemas. */
  private static void add(JsonObject mcp, JsonArray seen, JsonArray full) {
    seen.add(new JsonObject().put("name", mcp.getString("name")).put("description", mcp.getString("description"))
        .put("inputSchema", mcp.getJsonObject("inputSchema")));
    full.add(mcp);
  }

  private static int tokens(String compactJson) {
    return (compactJson.length() + 3) / 4;
  }
}
