package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * What {@code tools/list} costs the read-write caller, who sees every tool, counting a token as
 * four characters of compact JSON (migrate, which only configured roles see, aside). A model reads each tool's name, description and input schema;
 * the full answer adds titles, annotations and output schemas. docs/performance.md records the
 * figures. The read-write caller of dev mode also sees the demo database's named tools, within
 * the same budget: node's DevToolListBudgetTest measures that list.
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

  /** What a role given only named tools pays: twenty tools of a support team, nothing of the built-in catalogue. */
  static final int NAMED_MODEL_TOKENS = 2_000;
  static final int NAMED_FULL_TOKENS = 6_000;

  @Test
  void twentyNamedToolsCostOnlyWhatTheyDeclare() {
    JsonArray seen = new JsonArray();
    JsonArray full = new JsonArray();
    for (int i = 0; i < 20; i++) {
      boolean read = i % 2 == 0;
      JsonObject entry = new JsonObject().put("name", (read ? "tickets_of_customer_" : "close_ticket_") + i)
          .put("description", read ? "The open tickets of one customer, newest first." : "Closes one ticket with a reason; plans first.")
          .put("kind", read ? "read" : "change")
          .put("statement", read ? "SELECT id, subject FROM support_tickets WHERE customer_id = $1 AND status = $2"
              : "UPDATE support_tickets SET status = 'closed', resolution = $2 WHERE id = $1")
          .put("parameters", new JsonArray()
              .add(new JsonObject().put("name", read ? "customer_id" : "ticket_id").put("type", "integer").put("minimum", 1))
              .add(new JsonObject().put("name", read ? "status" : "reason").put("type", "text").put("maxLength", 200)))
          .put("roles", new JsonArray().add("support_agent"));
      JsonObject mcp = NamedTool.fromJson(entry).descriptor().toMcp();
      seen.add(new JsonObject().put("name", mcp.getString("name")).put("description", mcp.getString("description"))
          .put("inputSchema", mcp.getJsonObject("inputSchema")));
      full.add(mcp);
    }
    int model = tokens(seen.encode());
    int whole = tokens(new JsonObject().put("tools", full).encode());
    System.out.printf("tools/list for a role with 20 named tools only: %d tokens as a model sees them, %d in full%n", model, whole);
    assertTrue(model <= NAMED_MODEL_TOKENS, "20 named tools cost a model " + model + " tokens, more than " + NAMED_MODEL_TOKENS);
    assertTrue(whole <= NAMED_FULL_TOKENS, "20 named tools cost " + whole + " tokens in full, more than " + NAMED_FULL_TOKENS);
  }

  private static int tokens(String compactJson) {
    return (compactJson.length() + 3) / 4;
  }
}
