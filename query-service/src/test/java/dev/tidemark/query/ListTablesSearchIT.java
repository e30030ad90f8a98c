package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.contract.Caller;
import dev.tidemark.contract.ToolReply;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.OutputSchemas;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * list_tables' search on a schema of 500 tables (with views, functions and comments), called over
 * the event bus as a gateway calls it: what one call costs in tokens (4 characters each) in the
 * structured content and in the text the gateway renders, paging, detail levels, what a role
 * without rights sees, and each bad input.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ListTablesSearchIT {

  private static final String SCHEMA = "it_search";
  private static final int TABLES = 500;
  private static final String LONG_COMMENT = "Loyalty tier of the account, from the programme monthly run. ".repeat(5).trim();

  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    ServiceHarness.prepareDatabase(infra);
    try (Connection conn = ServiceHarness.jdbc(infra)) {
      var sql = conn.createStatement();
      sql.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
      sql.execute("CREATE SCHEMA " + SCHEMA);
      sql.execute("""
          DO $$ BEGIN
            FOR i IN 0..%d LOOP
              EXECUTE format('CREATE TABLE it_search.t%%s (id bigint PRIMARY KEY, name text NOT NULL, amount numeric(12,2) DEFAULT 0,
                                                         created_at timestamptz NOT NULL DEFAULT now(), note text)', lpad(i::text, 3, '0'));
              EXECUTE format('COMMENT ON TABLE it_search.t%%s IS %%L', lpad(i::text, 3, '0'), 'Business records, batch ' || i);
            END LOOP;
          END $$""".formatted(TABLES - 1));
      sql.execute("COMMENT ON TABLE it_search.t010 IS 'Ledger of amounts owed'");
      sql.execute("COMMENT ON TABLE it_search.t400 IS 'Archived: " + "kept for the auditors only. ".repeat(40).trim() + "'");
      sql.execute("ALTER TABLE it_search.t321 ADD COLUMN loyalty_tier text DEFAULT 'bronze'");
      sql.execute("COMMENT ON COLUMN it_search.t321.loyalty_tier IS '" + LONG_COMMENT + "'");
      for (int i = 0; i < 3; i++) {
        sql.execute("CREATE VIEW it_search.v_big_amounts_" + i + " AS SELECT id, amount FROM it_search.t00" + i + " WHERE amount > 100");
      }
      sql.execute("CREATE FUNCTION it_search.fn_score(points integer) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT points * 2'");
      sql.execute("COMMENT ON FUNCTION it_search.fn_score(integer) IS 'Doubles the points of a loyalty score'");
      sql.execute("CREATE FUNCTION it_search.fn_touch() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END'");
      sql.execute("CREATE TABLE it_search.vault (id bigint PRIMARY KEY, vault_secret text, amount numeric)");
      sql.execute("CREATE FUNCTION it_search.vault_open() RETURNS text LANGUAGE sql AS 'SELECT ''open'''");
      sql.execute("REVOKE EXECUTE ON FUNCTION it_search.vault_open() FROM PUBLIC");
      sql.execute("GRANT USAGE ON SCHEMA " + SCHEMA + " TO tidemark_reader, tidemark_writer");
      sql.execute("GRANT SELECT ON ALL TABLES IN SCHEMA " + SCHEMA + " TO tidemark_writer");
      sql.execute("GRANT SELECT ON ALL TABLES IN SCHEMA " + SCHEMA + " TO tidemark_reader");
      sql.execute("REVOKE SELECT ON it_search.vault FROM tidemark_reader");
      sql.execute("GRANT EXECUTE ON FUNCTION it_search.vault_open() TO tidemark_writer");
      sql.execute("ANALYZE it_search.t321");
    }
    harness = QueryRole.start(infra, Map.of(ConfigKey.DATABASE_SCHEMAS, "public," + SCHEMA));
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  @Test
  void findingAColumnByItsNameAmongFiveHundredTablesTakesOneCallUnderAThousandTokensInEachForm() {
    ToolReply reply = call(ServiceHarness.READER, new JsonObject().put("pattern", "loyalty_tier"));
    JsonObject found = structured(reply);
    JsonArray tables = found.getJsonArray("tables");
    assertEquals(1, tables.size(), found.encode());
    JsonObject table = tables.getJsonObject(0);
    assertEquals(SCHEMA, table.getString("schema"));
    assertEquals("t321", table.getString("name"));
    assertEquals("table", table.getString("kind"));
    JsonObject column = table.getJsonArray("columns").getJsonObject(0);
    assertEquals("loyalty_tier", column.getString("name"));
    assertEquals("text", column.getString("type"));
    assertNull(found.getValue("next_cursor"), "one call finds it");
    assertTrue(tokens(found.encode()) < 1_000, "structuredContent costs " + tokens(found.encode()) + " tokens");
    String text = text(reply);
    assertTrue(text.contains("\"t321.loyalty_tier\""), text);
    assertTrue(tokens(text) < 1_000, "the text costs " + tokens(text) + " tokens");
    System.out.printf("list_tables pattern loyalty_tier on %d tables: %d tokens of structuredContent, %d of text%n",
        TABLES, tokens(found.encode()), tokens(text));
  }

  @Test
  void aBroadPatternPagesWithinTheBudgetAndThePagesTogetherHoldEveryMatchOnce() {
    Set<String> seen = new HashSet<>();
    List<String> all = new ArrayList<>();
    String cursor = null;
    int pages = 0;
    do {
      JsonObject args = new JsonObject().put("pattern", "amount").put("schema", SCHEMA).put("max_tokens", 1_000);
      if (cursor != null) {
        args.put("cursor", cursor);
      }
      ToolReply reply = call(ServiceHarness.READER, args);
      JsonObject page = structured(reply);
      assertTrue(tokens(page.encode()) <= 1_000, "page " + pages + " costs " + tokens(page.encode()) + " tokens of structuredContent");
      assertTrue(tokens(text(reply)) <= 1_000, "page " + pages + " costs " + tokens(text(reply)) + " tokens of text");
      List<String> items = items(page);
      assertFalse(items.isEmpty(), "a page is never empty");
      all.addAll(items);
      seen.addAll(items);
      cursor = page.getString("next_cursor");
      pages++;
    } while (cursor != null && pages < 200);
    assertEquals(all.size(), seen.size(), "no match is on two pages");
    // every table's amount column, each view's, the views themselves by name, and t010, whose comment speaks of amounts;
    // never the vault's, which the reader may not read
    assertEquals(TABLES + 3 + 3 + 1, seen.size(), seen.toString());
    assertTrue(seen.contains("table it_search.t010"), seen.toString());
    assertTrue(seen.contains("column it_search.v_big_amounts_2.amount"), seen.toString());
    assertTrue(seen.contains("column it_search.t499.amount"), seen.toString());
    assertFalse(seen.contains("column it_search.vault.amount"), "the reader may not read the vault");
    assertTrue(pages > 1, "the matches take several pages: " + pages);

    ToolReply everything = call(ServiceHarness.READER, new JsonObject().put("pattern", "*"));
    JsonObject first = structured(everything);
    assertNotNull(first.getString("next_cursor"), "a pattern that matches everything answers with a first page");
    assertTrue(tokens(first.encode()) <= 2_000, "the default budget holds: " + tokens(first.encode()));
    assertTrue(tokens(text(everything)) <= 2_000, "the default budget holds in the text: " + tokens(text(everything)));
    assertTrue(everything.summary().endsWith("; more follow: pass cursor " + first.getString("next_cursor")),
        "the text carries the cursor, for a host that shows the model only the text: " + everything.summary());

    JsonObject listed = ok(ServiceHarness.READER, new JsonObject().put("schema", SCHEMA));
    assertNotNull(listed.getString("next_cursor"), "a listing without pattern pages too");
    assertNull(listed.getValue("functions"), "a listing without pattern lists tables and views only");
  }

  @Test
  void theDetailLevelDecidesHowMuchOfEachMatchIsShown() {
    JsonObject names = ok(ServiceHarness.READER, new JsonObject().put("pattern", "loyalty").put("detail", "names"));
    assertEquals(new JsonObject().put("name", "loyalty_tier"), column(names, "t321"));
    assertEquals(new JsonObject().put("schema", SCHEMA).put("name", "fn_score").put("kind", "function").put("arguments", "points integer"),
        names.getJsonArray("functions").getJsonObject(0), "the function's comment speaks of loyalty");

    JsonObject summary = ok(ServiceHarness.READER, new JsonObject().put("pattern", "loyalty"));
    JsonObject column = column(summary, "t321");
    assertEquals("text", column.getString("type"));
    assertEquals(200, column.getString("comment").length(), "detail summary cuts a comment");
    assertTrue(column.getString("comment").endsWith("…"), column.getString("comment"));
    assertNull(column.getValue("nullable"));
    JsonObject function = summary.getJsonArray("functions").getJsonObject(0);
    assertEquals("integer", function.getString("returns"));
    assertEquals("Doubles the points of a loyalty score", function.getString("comment"));

    JsonObject full = ok(ServiceHarness.READER, new JsonObject().put("pattern", "loyalty").put("detail", "full"));
    column = column(full, "t321");
    assertEquals(LONG_COMMENT, column.getString("comment"));
    assertEquals(true, column.getBoolean("nullable"));
    assertEquals("'bronze'::text", column.getString("default"));

    JsonObject table = ok(ServiceHarness.READER, new JsonObject().put("pattern", "ledger")).getJsonArray("tables").getJsonObject(0);
    assertEquals("t010", table.getString("name"));
    assertEquals(new JsonArray().add("id"), table.getJsonArray("primary_key"));
    assertEquals("Ledger of amounts owed", table.getString("comment"));
    JsonObject bare = ok(ServiceHarness.READER, new JsonObject().put("pattern", "ledger").put("detail", "names"))
        .getJsonArray("tables").getJsonObject(0);
    assertEquals(new JsonObject().put("schema", SCHEMA).put("name", "t010").put("kind", "table"), bare);
    assertTrue(ok(ServiceHarness.READER, new JsonObject().put("pattern", "fn_touch")).getJsonArray("functions").isEmpty(),
        "a trigger function is not something to call");
  }

  @Test
  void aRoleWithoutRightsOnATableOrFunctionDoesNotSeeIt() {
    JsonObject reader = ok(ServiceHarness.READER, new JsonObject().put("pattern", "vault"));
    assertTrue(reader.getJsonArray("tables").isEmpty(), reader.encode());
    assertTrue(reader.getJsonArray("functions").isEmpty(), reader.encode());

    JsonObject writer = ok(ServiceHarness.WRITER, new JsonObject().put("pattern", "vault"));
    List<String> items = items(writer);
    assertTrue(items.containsAll(List.of("table it_search.vault", "column it_search.vault.vault_secret", "function it_search.vault_open()")),
        items.toString());
  }

  @Test
  void eachBadInputIsRefusedWithItsCodeAndTheArgumentItNames() {
    Map<JsonObject, String> refused = Map.of(
        new JsonObject().put("pattern", ""), "pattern",
        new JsonObject().put("pattern", "   "), "pattern",
        new JsonObject().put("pattern", "x".repeat(101)), "pattern",
        new JsonObject().put("pattern", "a\nb"), "pattern",
        new JsonObject().put("pattern", 7), "pattern",
        new JsonObject().put("pattern", "a").put("detail", "everything"), "detail",
        new JsonObject().put("pattern", "a").put("max_tokens", 50), "max_tokens",
        new JsonObject().put("pattern", "a").put("max_tokens", "lots"), "max_tokens");
    refused.forEach((args, argument) -> {
      JsonObject error = harness.error(ServiceHarness.READER, "list_tables", args, "INVALID_ARGUMENTS");
      assertEquals(argument, error.getString("argument"), args.encode() + ": " + error.encode());
      assertTrue(error.getString("message").contains(argument), error.encode());
    });

    harness.error(ServiceHarness.READER, "list_tables", new JsonObject().put("pattern", "amount").put("cursor", "not-a-cursor"),
        "INVALID_CURSOR");
    String cursor = ok(ServiceHarness.READER, new JsonObject().put("pattern", "amount").put("max_tokens", 200)).getString("next_cursor");
    assertNotNull(cursor);
    JsonObject elsewhere = harness.error(ServiceHarness.READER, "list_tables",
        new JsonObject().put("pattern", "name").put("cursor", cursor), "INVALID_CURSOR");
    assertTrue(elsewhere.getString("message").contains("same"), elsewhere.encode());
    harness.error(ServiceHarness.WRITER, "list_tables", new JsonObject().put("pattern", "amount").put("cursor", cursor), "INVALID_CURSOR");

    JsonObject alone = harness.error(ServiceHarness.READER, "list_tables",
        new JsonObject().put("pattern", "archived").put("detail", "full").put("max_tokens", 200), "LIMIT_EXCEEDED");
    assertTrue(alone.getString("message").contains("detail summary"), alone.encode());
    assertEquals("t400", ok(ServiceHarness.READER, new JsonObject().put("pattern", "archived").put("max_tokens", 200))
        .getJsonArray("tables").getJsonObject(0).getString("name"), "detail summary cuts the comment to fit");
  }

  /** The example of docs/reference/tools.md, declared beside the tool's contract: the page shows what the tool answers. */
  @Test
  void theReferencePageExampleGivesTheResultThePageShows() throws Exception {
    JsonObject example;
    try (InputStream in = getClass().getResourceAsStream("/dev/tidemark/contract/tools/list_tables.json")) {
      example = new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getJsonObject("example");
    }
    assertEquals(example.getJsonObject("structuredContent"), ok(ServiceHarness.READER, example.getJsonObject("arguments")));
  }

  private ToolReply call(Caller who, JsonObject args) {
    return harness.call(who, "list_tables", args);
  }

  private JsonObject ok(Caller who, JsonObject args) {
    return harness.ok(who, "list_tables", args);
  }

  private static JsonObject structured(ToolReply reply) {
    assertNull(reply.error(), () -> reply.toJson().encode());
    OutputSchemas.assertFits("list_tables", reply.structured());
    return reply.structured();
  }

  /** The one matching column of {@code table} in a result. */
  private static JsonObject column(JsonObject result, String table) {
    return result.getJsonArray("tables").stream().map(JsonObject.class::cast).filter(t -> t.getString("name").equals(table))
        .findFirst().orElseThrow(() -> new AssertionError(table + " is not in " + result.encode())).getJsonArray("columns").getJsonObject(0);
  }

  /** Each match of a result: a table that matched itself (it carries its primary key), each column, each function. */
  private static List<String> items(JsonObject result) {
    List<String> items = new ArrayList<>();
    for (Object o : result.getJsonArray("tables")) {
      JsonObject t = (JsonObject) o;
      String name = t.getString("schema") + "." + t.getString("name");
      if (t.containsKey("primary_key")) {
        items.add("table " + name);
      }
      t.getJsonArray("columns", new JsonArray()).forEach(c -> items.add("column " + name + "." + ((JsonObject) c).getString("name")));
    }
    result.getJsonArray("functions", new JsonArray()).forEach(f -> items.add("function " + ((JsonObject) f).getString("schema") + "."
        + ((JsonObject) f).getString("name") + "(" + ((JsonObject) f).getString("arguments") + ")"));
    return items;
  }

  /**
   * The text content as the gateway's renderer writes it: the summary, then the rows between
   * BEGIN- and END- lines with a 12-character nonce, as a line of names and a line of values each.
   */
  private static String text(ToolReply reply) {
    StringBuilder text = new StringBuilder(reply.summary());
    if (reply.rows() != null && !reply.rows().isEmpty()) {
      Set<String> names = new LinkedHashSet<>();
      reply.rows().forEach(r -> names.addAll(((JsonObject) r).fieldNames()));
      text.append("\nBEGIN-000000000000\n").append(Json.encode(new ArrayList<>(names))).append('\n');
      for (Object r : reply.rows()) {
        JsonArray values = new JsonArray();
        names.forEach(n -> values.add(((JsonObject) r).getValue(n)));
        text.append(values.encode()).append('\n');
      }
      text.append("END-000000000000");
    }
    return text.toString();
  }

  private static int tokens(String s) {
    return (s.length() + 3) / 4;
  }
}
