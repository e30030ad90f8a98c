package dev.tidemark.node;

import static dev.tidemark.node.ChangelogFixtures.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One row holding every type of docs/reference/types.md, walked through every path that shows a
 * row: get_row, list_rows, query, resources/read, the samples of an update_rows and an insert_rows
 * plan, and changes_since. Each value is the documented JSON, spelled the same (same
 * text, keys in column order) on every path.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TypeMappingIT {

  static final String DB = "type_mapping_it";

  /** Each column: its type, the SQL literal stored, and the JSON every path shows (as JSON text). */
  private static final String[][] COLUMNS = {
      {"id", "bigint", "1", "1"},
      {"part", "integer", "2", "2"},
      {"seq", "serial", "DEFAULT", "1"},
      {"u", "uuid", "'6F1C0D3E-1111-2222-3333-444455556666'", "\"6f1c0d3e-1111-2222-3333-444455556666\""},
      {"t", "text", "'Hello'", "\"Hello\""},
      {"tags", "text[]", "ARRAY['vip', NULL, 'newsletter']", "[\"vip\",null,\"newsletter\"]"},
      {"price", "numeric(10,2)", "58.40", "\"58.40\""},
      {"big", "numeric", "12345678901234567890.120", "\"12345678901234567890.120\""},
      {"nan", "numeric", "'NaN'", "\"NaN\""},
      {"doc", "jsonb", "'{\"city\": \"Oslo\", \"n\": [1, 2]}'", "{\"n\":[1,2],\"city\":\"Oslo\"}"},
      // keys already in jsonb's order: the changelog stores a json column as jsonb (see types.md)
      {"doc_json", "json", "'{\"a\": 1, \"b\": [true, null]}'", "{\"a\":1,\"b\":[true,null]}"},
      {"flag", "boolean", "true", "true"},
      {"mood", "tm_mood", "'busy'", "\"busy\""},
      {"at", "timestamptz", "'2025-01-01 03:17:00+00'", "\"2025-01-01T03:17:00Z\""},
      {"at_frac", "timestamptz", "'2025-01-01 04:17:00.5+01'", "\"2025-01-01T03:17:00.5Z\""},
      {"local_at", "timestamp", "'2025-01-01 03:17:00'", "\"2025-01-01T03:17:00\""},
      {"day", "date", "'2025-01-31'", "\"2025-01-31\""},
      {"clock", "time", "'12:30:00'", "\"12:30:00\""},
      {"clock_tz", "timetz", "'12:30:00+01'", "\"12:30:00+01:00\""},
      {"span", "interval", "'1 year 2 mons 3 days 04:05:06.5'", "\"P1Y2M3DT4H5M6.5S\""},
      {"bytes", "bytea", "'\\xdeadbeef'", "\"3q2+7w==\""},
      {"f8", "double precision", "2.5", "2.5"},
      {"f8_nan", "double precision", "'NaN'", "\"NaN\""},
      {"f8_inf", "double precision", "'Infinity'", "\"Infinity\""},
      {"f8_ninf", "double precision", "'-Infinity'", "\"-Infinity\""},
      {"huge", "bigint", "9007199254740993", "9007199254740993"},
      {"nums", "numeric[]", "ARRAY[1.50, 2, NULL]", "[\"1.50\",\"2\",null]"},
      {"nothing", "text", "NULL", "null"},
  };

  private SharedInfra infra;
  private TidemarkNode node;
  private McpHttpClient client;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    ChangelogFixtures.prepare(infra, DB);
    List<String> columns = new ArrayList<>();
    List<String> values = new ArrayList<>();
    for (String[] c : COLUMNS) {
      columns.add(c[0] + " " + c[1]);
      values.add(c[2]);
    }
    sql(infra, DB,
        "DROP TABLE IF EXISTS public.tm_all",
        "DROP TYPE IF EXISTS public.tm_mood",
        "CREATE TYPE public.tm_mood AS ENUM ('calm', 'busy')",
        "CREATE TABLE public.tm_all (" + String.join(", ", columns) + ", PRIMARY KEY (id, part))",
        "INSERT INTO public.tm_all VALUES (" + String.join(", ", values) + ")",
        "GRANT SELECT, INSERT, UPDATE ON public.tm_all TO tidemark_writer",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO tidemark_writer",
        // the session's zone must not matter: the trigger's to_jsonb writes timestamptz in it
        "ALTER DATABASE " + DB + " SET timezone = 'Asia/Kolkata'",
        "SELECT tidemark.capture_schemas(ARRAY['public'])");
    // the changelog role too: changes_since reads what its relay decodes
    node = TestNodes.startAlone(infra, "gateway,query,command,changelog", Map.of(ConfigKey.DATABASE_URL, infra.postgres().url(DB)));
    client = new McpHttpClient(TestNodes.mcpUrl(node), TestNodes.READ_WRITE_TOKEN);
    client.initialize();
  }

  @AfterAll
  void stop() {
    if (client != null) {
      client.close();
    }
    TestNodes.stop(node);
  }

  private JsonObject ok(String tool, JsonObject args) {
    return ToolResults.ok(client, tool, args);
  }

  private JsonObject getRow(long id, int part) {
    return ok("get_row", new JsonObject().put("table", "tm_all").put("key", new JsonArray().add(id).add(part))).getJsonObject("row");
  }

  /** The documented row: each column's JSON, in column order. */
  private static JsonObject documented() {
    JsonObject row = new JsonObject();
    for (String[] c : COLUMNS) {
      row.put(c[0], new JsonArray("[" + c[3] + "]").getValue(0));
    }
    return row;
  }

  /** Same values, same spelling, keys in the same order; per column first, for a readable failure. */
  private static void assertSame(JsonObject expected, JsonObject actual, String path) {
    for (String column : expected.fieldNames()) {
      assertEquals(encode(expected.getValue(column)), encode(actual.getValue(column)), path + ": column " + column);
    }
    assertEquals(expected.encode(), actual.encode(), path + ": the whole row, keys in column order");
  }

  private static String encode(Object v) {
    return new JsonArray().add(v).encode();
  }

  private static JsonObject sample(JsonObject plan, String op) {
    for (Object o : plan.getJsonArray("samples")) {
      JsonObject s = (JsonObject) o;
      if (s.getString("table").equals("public.tm_all") && s.getString("op").equals(op)) {
        return s;
      }
    }
    throw new AssertionError("no " + op + " sample in " + plan.encode());
  }

  @Test
  void everyTypeHasOneSpellingOnEveryPath() {
    String head = ok("status", new JsonObject()).getString("changelog_head");
    JsonObject expected = documented();

    // reads
    JsonObject read = getRow(1, 2);
    assertSame(expected, read, "get_row");
    assertSame(read, ok("list_rows", new JsonObject().put("table", "tm_all")).getJsonArray("rows").getJsonObject(0), "list_rows");
    assertSame(read, ok("query", new JsonObject().put("sql", "SELECT * FROM public.tm_all")).getJsonArray("rows").getJsonObject(0),
        "query");
    JsonObject resource = client.rpc("resources/read", new JsonObject().put("uri", "tidemark://row/tm_all/1,2")).getJsonObject("result");
    assertSame(read, new JsonObject(resource.getJsonArray("contents").getJsonObject(0).getString("text")).getJsonObject("row"),
        "resources/read");

    // update_rows: the plan shows the changed column before and after as get_row does
    JsonObject update = new JsonObject().put("table", "tm_all").put("key", new JsonArray().add(1).add(2))
        .put("set", new JsonObject().put("t", "Hello again"));
    JsonObject updated = read.copy().put("t", "Hello again");
    JsonObject plan = ok("update_rows", update);
    assertEquals(new JsonArray().add(1).add(2).encode(), sample(plan, "UPDATE").getJsonArray("key").encode(), "plan key");
    // an update's sample shows the key and only the columns that change
    assertSame(new JsonObject().put("t", read.getValue("t")), sample(plan, "UPDATE").getJsonObject("before"), "update_rows plan before");
    assertSame(new JsonObject().put("t", "Hello again"), sample(plan, "UPDATE").getJsonObject("after"), "update_rows plan after");
    String updateKey = UUID.randomUUID().toString();
    ok("update_rows", update.copy().put("plan_id", plan.getString("plan_id")).put("idempotency_key", updateKey));
    assertSame(updated, getRow(1, 2), "get_row after the update");

    // insert_rows: every value sent back as it was read
    JsonObject values = read.copy().put("id", 3).put("part", 4);
    values.remove("seq");
    JsonObject insert = new JsonObject().put("table", "tm_all").put("rows", new JsonArray().add(values));
    JsonObject insertPlan = ok("insert_rows", insert);
    JsonObject planned = sample(insertPlan, "INSERT").getJsonObject("after");
    JsonObject inserted = read.copy().put("id", 3).put("part", 4).put("seq", planned.getValue("seq"));
    assertSame(inserted, planned, "insert_rows plan after");
    JsonObject insertCommit = ok("insert_rows", insert.copy().put("plan_id", insertPlan.getString("plan_id"))
        .put("idempotency_key", UUID.randomUUID().toString()));
    JsonObject readInserted = getRow(3, 4);
    assertSame(read.copy().put("id", 3).put("part", 4).put("seq", readInserted.getValue("seq")), readInserted,
        "get_row of the inserted row");
    assertEquals(1, insertCommit.getJsonObject("totals").getInteger("inserted"), "a commit answers with its totals, not the images");

    // changes_since: the same images, and the key as get_row takes it
    List<JsonObject> changes = new ArrayList<>();
    ChangelogFixtures.await("both changes in changes_since", Duration.ofSeconds(20), () -> {
      changes.clear();
      ok("changes_since", new JsonObject().put("cursor", head).put("tables", new JsonArray().add("tm_all")))
          .getJsonArray("changes").forEach(c -> changes.add((JsonObject) c));
      return changes.size() >= 2;
    });
    JsonObject changedRow = changes.get(0);
    assertEquals("UPDATE", changedRow.getString("op"));
    assertEquals(new JsonArray().add(1).add(2).encode(), changedRow.getJsonArray("key").encode(), "changes_since key");
    assertSame(read, changedRow.getJsonObject("before"), "changes_since before");
    assertSame(updated, changedRow.getJsonObject("after"), "changes_since after");
    JsonObject insertedRow = changes.get(1);
    assertEquals("INSERT", insertedRow.getString("op"));
    assertEquals(new JsonArray().add(3).add(4).encode(), insertedRow.getJsonArray("key").encode(), "changes_since insert key");
    assertSame(readInserted, insertedRow.getJsonObject("after"), "changes_since insert after");
  }
}
