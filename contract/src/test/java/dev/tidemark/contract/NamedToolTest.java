package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Tools a team defines: what a definition may say, the MCP tool it becomes, and what a section of entries serves. */
class NamedToolTest {

  static JsonObject closeTicket() {
    return new JsonObject().put("name", "close_ticket").put("description", "Closes one ticket.").put("kind", "change")
        .put("statement", "UPDATE support_tickets SET status = 'closed' WHERE id = $1 AND $2::text IS NOT NULL AND $3::text <> ''")
        .put("parameters", new JsonArray()
            .add(new JsonObject().put("name", "ticket_id").put("type", "integer").put("minimum", 1))
            .add(new JsonObject().put("name", "reason").put("type", "text").put("maxLength", 200).put("required", false))
            .add(new JsonObject().put("name", "agent").put("type", "text").put("from", "claim.team")))
        .put("roles", new JsonArray().add("tidemark_writer"));
  }

  @Test
  void aDefinitionBecomesAToolWithAClosedInputSchemaThatLeavesOutBoundParameters() {
    ToolDescriptor tool = NamedTool.fromJson(closeTicket()).descriptor();
    JsonObject schema = tool.inputSchema();
    assertEquals(false, schema.getValue("additionalProperties"));
    assertEquals(Set.of("ticket_id", "reason", "plan_id", "confirm", "idempotency_key"), schema.getJsonObject("properties").fieldNames());
    assertEquals(new JsonArray().add("ticket_id"), schema.getJsonArray("required"));
    assertEquals(1, schema.getJsonObject("properties").getJsonObject("ticket_id").getValue("minimum"));
    assertEquals(Service.COMMAND, tool.service());
    assertEquals(true, tool.annotations().getBoolean("destructiveHint"));
    assertEquals(false, tool.annotations().getBoolean("readOnlyHint"));
    JsonObject read = NamedTool.fromJson(new JsonObject().put("name", "open_tickets").put("description", "d").put("kind", "read")
        .put("statement", "SELECT 1").put("roles", new JsonArray().add("r"))).descriptor().toMcp();
    assertEquals(true, read.getJsonObject("annotations").getBoolean("readOnlyHint"));
    assertEquals(Set.of("cursor"), read.getJsonObject("inputSchema").getJsonObject("properties").fieldNames());
  }

  @Test
  void theDefinitionSurvivesTheWireUnchanged() {
    NamedTool tool = NamedTool.fromJson(closeTicket());
    assertEquals(tool.toJson(), NamedTool.fromJson(tool.toJson()).toJson());
    assertEquals(tool.fingerprint(), NamedTool.fromJson(tool.toJson()).fingerprint());
  }

  @Test
  void valuesAreBoundInPlaceholderOrderWithTheCallersClaim() {
    NamedTool tool = NamedTool.fromJson(closeTicket());
    Caller withClaim = new Caller("c", "alice", "tidemark_writer", Access.READ_WRITE, List.of("*"), List.of(), new JsonObject().put("team", "blue"));
    assertEquals(new JsonArray().add(7).addNull().add("blue"), tool.bind(new JsonObject().put("ticket_id", 7), withClaim));
    Caller without = new Caller("c", "alice", "tidemark_writer", Access.READ_WRITE, List.of("*"));
    ToolException e = assertThrows(ToolException.class, () -> tool.bind(new JsonObject().put("ticket_id", 7), without));
    assertEquals(ErrorCode.PERMISSION_DENIED, e.code());
  }

  @Test
  void aValueRefusedAtItsPlaceholderNamesTheParameter() {
    NamedTool tool = NamedTool.fromJson(closeTicket());
    ToolException refused = new ToolException(ErrorCode.INVALID_ARGUMENTS, "Argument params does not fit at /params/0: ...",
        new JsonObject().put("argument", "params").put("faults", new JsonArray().add(new JsonObject().put("pointer", "/params/0")
            .put("expected", "a whole number"))));
    ToolException named = (ToolException) tool.blame(refused);
    assertEquals("ticket_id", named.details().getString("argument"));
    assertEquals("/ticket_id", named.details().getJsonArray("faults").getJsonObject(0).getString("pointer"));
    assertTrue(named.getMessage().startsWith("Argument ticket_id does not fit: expected a whole number."), named.getMessage());
  }

  @Test
  void everyBadEntryIsNamedWithItsFaultAndTheOthersAreServed() {
    JsonArray tools = new JsonArray()
        .add(closeTicket())
        .add(closeTicket().copy().put("name", "bad_type").put("parameters", new JsonArray()
            .add(new JsonObject().put("name", "x").put("type", "money"))))
        .add(closeTicket().copy().put("name", "status"))
        .add(closeTicket().copy().put("name", "bad_limit").put("parameters", new JsonArray()
            .add(new JsonObject().put("name", "x").put("type", "text").put("minimum", 1))))
        .add(closeTicket().copy().put("name", "no_roles").put("roles", new JsonArray()))
        .add(closeTicket());
    NamedCatalog.Definitions defs = NamedCatalog.parse(new JsonObject().put("tools", tools)
        .put("toolsets", new JsonObject().put("support", new JsonArray().add("close_ticket").add("status").add("missing")))
        .put("consumers", new JsonArray().add(new JsonObject().put("name", "triage").put("reactions", new JsonArray().add("close_ticket")))),
        ToolCatalog.all().stream().map(ToolDescriptor::name).toList(), "database.");
    NamedCatalog catalog = NamedCatalog.assemble(defs, Map.of(), Set.of("status"));
    assertEquals(List.of("close_ticket"), catalog.tools().stream().map(NamedTool::name).toList());
    List<String> faults = catalog.faults().stream().map(NamedCatalog.Fault::describe).toList();
    assertTrue(faults.get(0).startsWith("database.tools[1] (bad_type): parameter x has the unknown type money"), faults.toString());
    assertTrue(faults.get(1).startsWith("database.tools[2] (status): the name status is a built-in tool's"), faults.toString());
    assertTrue(faults.get(2).startsWith("database.tools[3] (bad_limit): parameter x.minimum is for number types only"), faults.toString());
    assertTrue(faults.get(3).startsWith("database.tools[4] (no_roles): roles must name at least one"), faults.toString());
    assertTrue(faults.get(4).contains("the name close_ticket is taken by database.tools[0] (close_ticket)"), faults.toString());
    assertTrue(faults.get(5).startsWith("toolsets.support: names missing"), faults.toString());
    assertEquals(List.of("close_ticket", "status"), catalog.toolset("support"));
    assertTrue(catalog.tool("close_ticket").reaction(), "a consumer's reaction takes causation_token");
    assertTrue(catalog.tool("close_ticket").inputSchema().getJsonObject("properties").containsKey("causation_token"));
  }

  @Test
  void aToolPostgresqlRefusedIsLeftOutWithWhatDependsOnIt() {
    NamedCatalog.Definitions defs = NamedCatalog.parse(new JsonObject().put("tools", new JsonArray().add(closeTicket()))
        .put("consumers", new JsonArray().add(new JsonObject().put("name", "triage").put("reactions", new JsonArray().add("close_ticket")))),
        List.of(), "");
    NamedCatalog catalog = NamedCatalog.assemble(defs, Map.of("close_ticket", "the statement does not parse"), Set.of());
    assertNull(catalog.tool("close_ticket"));
    assertEquals(List.of(), catalog.consumer("triage").reactions());
    assertEquals("tools[0] (close_ticket): the statement does not parse", catalog.faults().get(0).describe());
    assertFalse(catalog.sameToolsAs(NamedCatalog.assemble(defs, Map.of(), Set.of())));
  }

  @Test
  void declaredTypesBindToThePlaceholdersPostgresqlInfers() {
    assertTrue(NamedTypes.binds("integer", "bigint"));
    assertTrue(NamedTypes.binds("integer", "numeric"));
    assertTrue(NamedTypes.binds("text", "order_status"));
    assertTrue(NamedTypes.binds("text[]", "character varying[]"));
    assertFalse(NamedTypes.binds("text", "uuid"));
    assertFalse(NamedTypes.binds("numeric", "integer"));
    assertFalse(NamedTypes.binds("boolean", "text"));
    assertEquals("timestamp with time zone", NamedTypes.canonical("timestamptz"));
    assertNull(NamedTypes.canonical("money"));
  }
}
