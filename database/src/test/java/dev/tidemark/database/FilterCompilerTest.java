package dev.tidemark.database;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.database.TableCatalog.Column;
import dev.tidemark.database.TableCatalog.Table;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FilterCompilerTest {

  private static final Table ORDERS = table();

  private static Table table() {
    Map<String, Column> cols = new LinkedHashMap<>();
    cols.put("id", new Column("id", "bigint", "bigint", false, null, null, "N"));
    cols.put("status", new Column("status", "order_status", "order_status", false, null, null, "E"));
    cols.put("tags", new Column("tags", "text[]", "text[]", true, null, null, "A"));
    cols.put("odd\"name", new Column("odd\"name", "text", "text", true, null, null, "S"));
    return new Table(1, "public", "orders", "table", null, null, false, List.of("id"), cols);
  }

  private static JsonObject cond(String column, String op, Object value) {
    return new JsonObject().put("column", column).put("op", op).put("value", value);
  }

  @Test
  void everyValueBecomesAParameterCastToTheColumnsType() {
    SqlParams params = new SqlParams();
    String sql = FilterCompiler.compile(new JsonObject().put("and", new JsonArray()
        .add(cond("id", "gte", 10))
        .add(cond("status", "in", new JsonArray().add("paid").add("shipped")))
        .add(new JsonObject().put("not", cond("odd\"name", "ilike", "%x' OR 1=1 --")))
        .add(new JsonObject().put("or", new JsonArray().add(cond("tags", "is_null", true)).add(cond("id", "ne", 3))))), ORDERS, params);
    assertEquals("(\"id\" >= $1::text::bigint) AND (\"status\" = ANY($2::text[]::order_status[])) AND (NOT (\"odd\"\"name\"::text ILIKE $3::text))"
        + " AND ((\"tags\" IS NULL) OR (\"id\" IS DISTINCT FROM $4::text::bigint))", sql);
    assertEquals("10", params.values().get(0));
    assertEquals("%x' OR 1=1 --", params.values().get(2));
  }

  @Test
  void noFilterIsTrue() {
    assertEquals("TRUE", FilterCompiler.compile(null, ORDERS, new SqlParams()));
  }

  @Test
  void anUnknownColumnIsInvalidArgumentsNamingIt() {
    ToolException e = assertThrows(ToolException.class, () -> FilterCompiler.compile(cond("nope", "eq", 1), ORDERS, new SqlParams()));
    assertEquals(ErrorCode.INVALID_ARGUMENTS, e.code());
    assertEquals("nope", e.details().getString("column"));
    assertEquals("where", e.details().getString("argument"));
  }

  @Test
  void aFilterWithTwoFormsOrABadValueNamesItsPointer() {
    ToolException both = assertThrows(ToolException.class, () -> FilterCompiler.compile(
        cond("id", "eq", 1).put("or", new JsonArray().add(cond("id", "eq", 2))), ORDERS, new SqlParams()));
    assertEquals("/where", both.details().getJsonArray("faults").getJsonObject(0).getString("pointer"));
    ToolException nullEq = assertThrows(ToolException.class, () -> FilterCompiler.compile(
        new JsonObject().put("and", new JsonArray().add(cond("id", "eq", null))), ORDERS, new SqlParams()));
    assertEquals("/where/and/0/value", nullEq.details().getJsonArray("faults").getJsonObject(0).getString("pointer"));
    ToolException emptyIn = assertThrows(ToolException.class, () -> FilterCompiler.compile(cond("id", "in", new JsonArray()), ORDERS, new SqlParams()));
    assertTrue(emptyIn.getMessage().contains("an array of 1 to"));
  }

  @Test
  void aFieldOutsideTheFilterFormIsRefusedNotIgnored() {
    ToolException e = assertThrows(ToolException.class, () -> FilterCompiler.compile(cond("id", "eq", 1).put("colum", "status"),
        ORDERS, new SqlParams()));
    assertEquals(ErrorCode.INVALID_ARGUMENTS, e.code());
  }

  @Test
  void theColumnsAFilterNamesAreItsConditionsColumnsOnly() {
    JsonObject where = new JsonObject().put("or", new JsonArray().add(cond("id", "eq", new JsonObject().put("column", "x")))
        .add(new JsonObject().put("not", cond("status", "eq", "paid"))));
    assertEquals(java.util.Set.of("id", "status"), FilterCompiler.columns(where));
    assertTrue(FilterCompiler.columns(null).isEmpty());
  }
}
