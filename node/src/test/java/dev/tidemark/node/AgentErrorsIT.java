package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What an agent reads when it errs: every bad value, unknown column or table and value outside an
 * enum names its argument and the allowed form, in the text as well as in structuredContent, for
 * every tool that takes them; hints that name only what an agent can do; RETURNING rows; keys
 * completed in their type's order.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentErrorsIT {

  static final String DB = "agent_errors_it";
  static final String LABELS = "open, waiting, closed";

  private TidemarkNode node;
  private McpHttpClient writer;
  private McpHttpClient reader;

  @BeforeAll
  void start(SharedInfra infra) {
    ChangelogFixtures.prepare(infra, DB);
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.ae_ticket, public.ae_secret CASCADE",
        "DROP TYPE IF EXISTS public.ae_status",
        "CREATE TYPE public.ae_status AS ENUM ('open', 'waiting', 'closed')",
        "CREATE TABLE public.ae_ticket (id serial PRIMARY KEY, status public.ae_status NOT NULL DEFAULT 'open',"
            + " qty int NOT NULL DEFAULT 0, title text NOT NULL DEFAULT '')",
        "CREATE TABLE public.ae_secret (id int PRIMARY KEY)",
        "INSERT INTO public.ae_ticket (qty) SELECT g FROM generate_series(1, 120) g",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON public.ae_ticket TO tidemark_writer",
        "GRANT SELECT ON public.ae_ticket TO tidemark_reader",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        "REVOKE ALL ON public.ae_secret FROM tidemark_writer, tidemark_reader",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    node = TestNodes.startAlone(infra, "gateway,query,command", Map.of(
        ConfigKey.DATABASE_URL, infra.postgres().url(DB),
        ConfigKey.DATABASE_STATEMENT_TIMEOUT_MS, "1000"));
    writer = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
    writer.initialize();
    reader = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_ONLY_TOKEN);
    reader.initialize();
  }

  @AfterAll
  void stop() {
    for (McpHttpClient c : new McpHttpClient[] {writer, reader}) {
      if (c != null) {
        c.close();
      }
    }
    TestNodes.stop(node);
  }

  // ---- bad input, one table for every tool that takes a value, a column or a table ----

  static JsonObject args(String json) {
    return new JsonObject(json);
  }

  static Stream<Arguments> badInput() {
    String t = "\"table\": \"ae_ticket\"";
    String bad = "\"zzz\"";
    return Stream.of(
        // tool, arguments, code, argument at fault, what the message must name
        Arguments.of("get_row", "{" + t + ", \"key\": " + bad + "}", "INVALID_ARGUMENTS", "key", "/key", "integer"),
        Arguments.of("get_row", "{\"table\": \"ae_nope\", \"key\": 1}", "NOT_FOUND", "table", "list_tables", "public"),
        Arguments.of("list_rows", "{" + t + ", \"where\": {\"column\": \"qty\", \"op\": \"gt\", \"value\": " + bad + "}}",
            "INVALID_ARGUMENTS", "where", "/where/value", "integer"),
        Arguments.of("list_rows", "{" + t + ", \"where\": {\"column\": \"status\", \"op\": \"eq\", \"value\": \"bogus\"}}",
            "INVALID_ARGUMENTS", "where", "/where/value", LABELS),
        Arguments.of("list_rows", "{" + t + ", \"where\": {\"column\": \"status\", \"op\": \"in\", \"value\": [\"open\", \"bogus\"]}}",
            "INVALID_ARGUMENTS", "where", "/where/value", LABELS),
        Arguments.of("list_rows", "{" + t + ", \"where\": {\"and\": [{\"column\": \"qty\", \"op\": \"eq\", \"value\": 1},"
            + " {\"column\": \"status\", \"op\": \"eq\", \"value\": \"bogus\"}]}}", "INVALID_ARGUMENTS", "where", "/where/and/1/value", LABELS),
        Arguments.of("list_rows", "{" + t + ", \"where\": {\"column\": \"nope\", \"op\": \"eq\", \"value\": 1}}",
            "INVALID_ARGUMENTS", "where", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("list_rows", "{" + t + ", \"order\": [\"nope\"]}", "INVALID_ARGUMENTS", "order", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("list_rows", "{" + t + ", \"columns\": [\"nope\"]}", "INVALID_ARGUMENTS", "columns", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("list_rows", "{\"table\": \"ae_nope\"}", "NOT_FOUND", "table", "list_tables", "public"),
        Arguments.of("insert_rows", "{" + t + ", \"rows\": [{\"qty\": 1}, {\"qty\": " + bad + "}]}",
            "INVALID_ARGUMENTS", "rows", "/rows/1/qty", "integer"),
        Arguments.of("insert_rows", "{" + t + ", \"rows\": [{\"status\": \"bogus\"}]}", "INVALID_ARGUMENTS", "rows", "/rows/0/status", LABELS),
        Arguments.of("insert_rows", "{" + t + ", \"rows\": [{\"nope\": 1}]}", "INVALID_ARGUMENTS", "rows", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("insert_rows", "{\"table\": \"ae_nope\", \"rows\": [{\"id\": 1}]}", "NOT_FOUND", "table", "list_tables", "public"),
        Arguments.of("update_rows", "{" + t + ", \"key\": " + bad + ", \"set\": {\"qty\": 1}}", "INVALID_ARGUMENTS", "key", "/key", "integer"),
        Arguments.of("update_rows", "{" + t + ", \"key\": 1, \"set\": {\"qty\": " + bad + "}}", "INVALID_ARGUMENTS", "set", "/set/qty", "integer"),
        Arguments.of("update_rows", "{" + t + ", \"key\": 1, \"set\": {\"status\": \"bogus\"}}", "INVALID_ARGUMENTS", "set", "/set/status", LABELS),
        Arguments.of("update_rows", "{" + t + ", \"key\": 1, \"set\": {\"nope\": 1}}", "INVALID_ARGUMENTS", "set", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("update_rows", "{" + t + ", \"where\": {\"column\": \"status\", \"op\": \"eq\", \"value\": \"bogus\"}, \"set\": {\"qty\": 1}}",
            "INVALID_ARGUMENTS", "where", "/where/value", LABELS),
        Arguments.of("update_rows", "{\"table\": \"ae_nope\", \"key\": 1, \"set\": {\"qty\": 1}}", "NOT_FOUND", "table", "list_tables", "public"),
        Arguments.of("delete_rows", "{" + t + ", \"key\": " + bad + "}", "INVALID_ARGUMENTS", "key", "/key", "integer"),
        Arguments.of("delete_rows", "{" + t + ", \"where\": {\"column\": \"status\", \"op\": \"eq\", \"value\": \"bogus\"}}",
            "INVALID_ARGUMENTS", "where", "/where/value", LABELS),
        Arguments.of("delete_rows", "{" + t + ", \"where\": {\"column\": \"nope\", \"op\": \"eq\", \"value\": 1}}",
            "INVALID_ARGUMENTS", "where", "Its columns: id, status, qty, title", "nope"),
        Arguments.of("delete_rows", "{\"table\": \"ae_nope\", \"key\": 1}", "NOT_FOUND", "table", "list_tables", "public"),
        Arguments.of("describe_table", "{\"table\": \"ae_nope\"}", "NOT_FOUND", "table", "list_tables", "public"));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("badInput")
  void badInputGetsOneErrorNamingTheArgumentAndTheAllowedForm(String tool, String arguments, String code, String argument,
      String names, String alsoNames) {
    JsonObject result = writer.callTool(tool, args(arguments));
    assertEquals(true, result.getBoolean("isError"), result::encode);
    JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
    assertEquals(code, error.getString("code"), error::encode);
    assertEquals(argument, error.getString("argument"), error::encode);
    String message = error.getString("message");
    assertTrue(message.contains(names) && message.contains(alsoNames), message);
    assertFalse(message.contains("zzz") || message.contains("bogus"), "the message never repeats a value: " + message);
    String text = result.getJsonArray("content").getJsonObject(0).getString("text");
    assertTrue(text.contains(message), "the text carries the message: " + text);
    assertEquals(1, count(message, "SQLSTATE") + (message.contains("SQLSTATE") ? 0 : 1), "SQLSTATE at most once: " + message);
    if (error.containsKey("faults")) {
      JsonObject fault = error.getJsonArray("faults").getJsonObject(0);
      assertTrue(message.contains(fault.getString("pointer")) && message.contains(fault.getString("expected")), message);
    }
  }

  // ---- messages ----

  @Test
  void schemaFaultsAreListedInTheTextWithTheirPointersAndNeverTheirValues() {
    JsonObject result = writer.callTool("list_rows", new JsonObject().put("table", "ae_ticket").put("limit", 99_999).put("colums", "zzz"));
    JsonObject error = result.getJsonObject("structuredContent").getJsonObject("error");
    assertEquals("INVALID_ARGUMENTS", error.getString("code"));
    String text = result.getJsonArray("content").getJsonObject(0).getString("text");
    assertTrue(text.contains("at /limit, a number of at most 10000") && text.contains("at /colums, no such argument; allowed: "), text);
    assertFalse(text.contains("99999") || text.contains("zzz"), text);
    assertEquals(error.getJsonArray("faults").size(), 2, error::encode);
  }

  @Test
  void describeTableShowsAnEnumColumnsLabels() {
    JsonObject described = ToolResults.ok(writer, "describe_table", new JsonObject().put("table", "ae_ticket"));
    JsonObject status = described.getJsonArray("columns").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("name").equals("status")).findFirst().orElseThrow();
    assertEquals(new JsonArray().add("open").add("waiting").add("closed"), status.getJsonArray("labels"));
    JsonObject qty = described.getJsonArray("columns").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("name").equals("qty")).findFirst().orElseThrow();
    assertNull(qty.getValue("labels"));
  }

  @Test
  void aRefusedValueNamesItsSqlStateOnce() {
    JsonObject read = ToolResults.error(writer, "query", new JsonObject().put("sql", "SELECT 1 / 0"), "INVALID_ARGUMENTS");
    assertEquals(1, count(read.getString("message"), "SQLSTATE"), read.getString("message"));
    JsonObject change = ToolResults.error(writer, "execute", new JsonObject().put("sql", "UPDATE ae_ticket SET qty = ($1::text)::int WHERE id = 1")
        .put("params", new JsonArray().add("zzz")), "INVALID_ARGUMENTS");
    assertEquals(1, count(change.getString("message"), "SQLSTATE"), change.getString("message"));
    assertEquals("params", change.getString("argument"));
    JsonObject inText = ToolResults.error(writer, "execute", new JsonObject().put("sql", "UPDATE ae_ticket SET qty = 1 / 0 WHERE id = 1"),
        "INVALID_ARGUMENTS");
    assertEquals(1, count(inText.getString("message"), "SQLSTATE"), inText.getString("message"));
    assertEquals("sql", inText.getString("argument"), "without params the fault is in the statement");
  }

  @Test
  void forUpdateIsReadOnlyForEveryCaller() {
    for (McpHttpClient c : new McpHttpClient[] {writer, reader}) {
      for (String sql : new String[] {"SELECT * FROM ae_ticket WHERE id = 1 FOR UPDATE", "SELECT * FROM ae_ticket FOR SHARE",
          "WITH d AS (DELETE FROM ae_ticket WHERE id = -1 RETURNING id) SELECT * FROM d"}) {
        JsonObject e = ToolResults.error(c, "query", new JsonObject().put("sql", sql), "READ_ONLY");
        assertEquals("sql", e.getString("argument"));
        assertFalse(e.getString("message").contains("administrator"), e.getString("message"));
      }
    }
  }

  @Test
  void permissionDeniedSaysWhatTheAgentCanDo() {
    JsonObject e = ToolResults.error(reader, "query", new JsonObject().put("sql", "SELECT * FROM ae_secret"), "PERMISSION_DENIED");
    assertTrue(e.getString("message").contains("list_tables") && !e.getString("message").contains("administrator"), e.getString("message"));
  }

  @Test
  void aTimeoutSaysHowToNarrowTheRequest() {
    JsonObject e = ToolResults.error(reader, "query", new JsonObject().put("sql", "SELECT pg_sleep(3)"), "TIMEOUT");
    String message = e.getString("message");
    assertTrue(message.contains("add a filter or a limit") && !message.contains("raise"), message);
  }

  // ---- execute's RETURNING rows, the sequence note ----

  @Test
  void executeReturnsItsReturningRowsInThePlanAndTheCommit() {
    JsonObject args = new JsonObject().put("sql", "INSERT INTO ae_ticket (title, status) VALUES ($1, 'waiting') RETURNING id, status, title")
        .put("params", new JsonArray().add("returned"));
    JsonObject plan = ToolResults.ok(writer, "execute", args);
    JsonArray planned = plan.getJsonArray("returning");
    assertEquals(1, planned.size(), plan::encode);
    assertEquals("waiting", planned.getJsonObject(0).getString("status"));
    assertNotNull(plan.getString("note"), "a plan that inserted says that it used up sequence values");
    assertTrue(plan.getString("note").contains("sequences"));
    JsonObject commit = ToolResults.ok(writer, "execute", args.copy().put("plan_id", plan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
    JsonObject committed = commit.getJsonArray("returning").getJsonObject(0);
    assertEquals("returned", committed.getString("title"));
    assertTrue(committed.getLong("id") > planned.getJsonObject(0).getLong("id"), "the commit draws a new id, as the note says");
    JsonObject row = ToolResults.ok(writer, "get_row", new JsonObject().put("table", "ae_ticket").put("key", committed.getLong("id")));
    assertEquals(committed, new JsonObject().put("id", row.getJsonObject("row").getLong("id"))
        .put("status", row.getJsonObject("row").getString("status")).put("title", row.getJsonObject("row").getString("title")),
        "RETURNING rows are mapped as the read tools map rows");

    JsonObject none = ToolResults.ok(writer, "execute", new JsonObject().put("sql", "UPDATE ae_ticket SET qty = qty WHERE id = 1"));
    assertNull(none.getValue("returning"), "a statement without RETURNING has no returning field");
    assertNull(none.getValue("note"));
  }

  @Test
  void manyReturningRowsAreCutToTheCap() {
    JsonObject plan = ToolResults.ok(writer, "execute", new JsonObject().put("sql", "UPDATE ae_ticket SET qty = qty RETURNING *"));
    assertEquals(100, plan.getJsonArray("returning").size());
    assertEquals(true, plan.getBoolean("returning_truncated"));
  }

  // ---- completion ----

  @Test
  void keyCompletionFollowsTheKeyColumnsType() {
    JsonObject result = reader.rpc("completion/complete", new JsonObject()
        .put("ref", new JsonObject().put("type", "ref/resource").put("uri", "tidemark://row/{table}/{key}"))
        .put("argument", new JsonObject().put("name", "key").put("value", "1"))
        .put("context", new JsonObject().put("arguments", new JsonObject().put("table", "ae_ticket")))).getJsonObject("result");
    JsonArray values = result.getJsonObject("completion").getJsonArray("values");
    assertEquals(new JsonArray().add("1").add("10").add("11").add("12"), new JsonArray(values.getList().subList(0, 4)), values::encode);
    int at100 = values.getList().indexOf("100");
    assertTrue(at100 > values.getList().indexOf("19"), "numbers in numeric order: " + values.encode());
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }
}
