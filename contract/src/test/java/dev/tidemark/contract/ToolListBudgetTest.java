package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * What {@code tools/list} costs the read-write caller, who sees every tool, counting a token as
 * four characters of compact JSON (migrate, which only configured roles see, aside). A model reads each tool's name, description and input schema;
 * the full answer adds titles, annotations and output schemas. docs/performance.md records the
 * figures.
 */
class ToolListBudgetTest {

  static final int MODEL_TOKENS = 2_500;
  static final int FULL_TOKENS = 6_000;

  @Test
  void everyToolTogetherStaysWithinTheTokenBudgetOfTheReadWriteCaller() {
    JsonArray seen = new JsonArray();
    JsonArray full = new JsonArray();
    for (ToolDescriptor tool : ToolCatalog.all()) {
      if (tool.name().equals(ToolCatalog.MIGRATE)) {
        continue;  // shown only to the roles of command.migrate-roles, which is empty unless configured
      }
      JsonObject mcp = tool.toMcp();
      seen.add(new JsonObject().put("name", mcp.getString("name")).put("description", mcp.getString("description"))
          .put("inputSchema", mcp.getJsonObject("inputSchema")));
      full.add(mcp);
    }
    int model = tokens(seen.encode());
    int whole = tokens(new JsonObject().put("tools", full).encode());
    System.out.printf("tools/list for the read-write caller: %d tools, %d tokens as a model sees them, %d in full%n",
        full.size(), model, whole);
    assertTrue(model <= MODEL_TOKENS, "name, description and inputSchema of every tool cost " + model + " tokens, more than " + MODEL_TOKENS);
    assertTrue(whole <= FULL_TOKENS, "tools/list costs " + whole + " tokens in full, more than " + FULL_TOKENS);
  }

  private static int tokens(String compactJson) {
    return (compactJson.length() + 3) / 4;
  }
}
