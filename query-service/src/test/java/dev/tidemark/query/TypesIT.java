package dev.tidemark.query;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** Every type of docs/reference/types.md, as output and back in as a query parameter. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TypesIT {

  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
        harness = QueryRole.start(infra, Map.of());
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private JsonObject row(String sql, JsonArray params) {
    return harness.ok(ServiceHarness.READER, "query", new JsonObject().put("sql", sql).put("params", params))
        .getJsonArray("rows").getJsonObject(0);
  }

  /** Each type: an SQL literal, the JSON it maps to, and the cast that takes the JSON back in. */
  private static final Object[][] TYPES = {
      {"true", true, "boolean"},
      {"7::smallint", 7, "smallint"},
      {"70000::integer", 70000, "integer"},
      {"9007199254740993::bigint", 9007199254740993L, "bigint"},
      {"2.5::double precision", 2.5, "double precision"},
      {"12345678901234567890.12::numeric", "12345678901234567890.12", "numeric"},
      {"'19.90'::numeric(12,2)", "19.90", "numeric"},
      {"'hello'::text", "hello", "text"},
      {"'paid'::order_status", "paid", "order_status"},
      {"'6f1c0d3e-1111-2222-3333-444455556666'::uuid", "6f1c0d3e-1111-2222-3333-444455556666", "uuid"},
      {"'2025-01-31'::date", "2025-01-31", "date"},
      {"'2025-01-01 03:17:00.123456+00'::timestamptz", "2025-01-01T03:17:00.123456Z", "timestamptz"},
      {"'2025-01-01 03:17:00'::timestamp", "2025-01-01T03:17:00", "timestamp"},
      {"'12:30:00'::time", "12:30:00", "time"},
      {"'12:30:00+01'::timetz", "12:30:00+01:00", "timetz"},
      {"'\\xdeadbeef'::bytea", "3q2+7w==", "bytea"},
      {"'{\"city\":\"Oslo\",\"n\":[1,2]}'::jsonb", new JsonObject().put("city", "Oslo").put("n", new JsonArray().add(1).add(2)), "jsonb"},
      {"'[1,\"a\"]'::json", new JsonArray().add(1).add("a"), "json"},
      {"ARRAY['vip','newsletter']::text[]", new JsonArray().add("vip").add("newsletter"), "text[]"},
      {"ARRAY[1,NULL,3]::int[]", new JsonArray().add(1).addNull().add(3), "int[]"},
      {"NULL::text", null, "text"},
  };

  @Test
  void everyTypeMapsToItsDocumentedJsonAndComesBackAsAParameter() {
    for (Object[] t : TYPES) {
      String literal = (String) t[0];
      // json has no equality operator: compare its text
      String same = t[2].equals("json") ? "(" + literal + ")::text = $1::json::text" : "(" + literal + ") IS NOT DISTINCT FROM $1::" + t[2];
      JsonObject out = row("SELECT " + literal + " AS v, $1::" + t[2] + " AS back, " + same + " AS same",
          new JsonArray().add(t[1]));
      assertEquals(t[1], out.getValue("v"), literal);
      assertEquals(t[1], out.getValue("back"), literal + " as a parameter");
      assertEquals(true, out.getBoolean("same"), literal + " survives the round trip");
    }
  }

  @Test
  void everyColumnTypeOfTheDemoDatabaseMapsAsDocumented() {
    JsonObject c = row("SELECT * FROM customers WHERE id = $1", new JsonArray().add(4));
    assertEquals(4, c.getInteger("id"));
    assertEquals(36, c.getString("external_id").length());
    assertEquals(new JsonArray().add("vip"), c.getJsonArray("tags"));
    assertEquals("2024-01-02T04:00:00Z", c.getString("created_at"));
    JsonObject p = row("SELECT * FROM products WHERE id = $1", new JsonArray().add(3));
    assertEquals(true, p.getValue("price") instanceof String);
    assertEquals("red", p.getJsonObject("attributes").getString("colour"));
    assertEquals(true, p.getBoolean("active"));
    JsonObject o = row("SELECT * FROM orders WHERE id = $1 AND status = $2 AND placed_at > $3", new JsonArray().add(5).add("pending").add("2025-01-01T00:00:00Z"));
    assertEquals("pending", o.getString("status"));
    assertEquals("Oslo", o.getJsonObject("shipping_address").getString("city"));
    JsonObject i = row("SELECT * FROM order_items WHERE order_id = $1 AND line_no = $2", new JsonArray().add(5).add(1));
    assertEquals(1, i.getInteger("line_no"));
  }
}
