package dev.tidemark.query.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.database.SqlParams;
import dev.tidemark.database.TableCatalog.Column;
import io.vertx.core.json.JsonArray;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ListRowsToolTest {

  private static final Map<String, Column> ORDERS = Map.of(
      "id", new Column("id", "bigint", "bigint", false, null, null, "N"),
      "odd\"name", new Column("odd\"name", "text", "text", true, null, null, "S"));

  @Test
  void keysetConditionStartsStrictlyAfterTheLastRowWithNullsPlacedByDirection() {
    Column status = ORDERS.get("odd\"name");
    Column id = ORDERS.get("id");
    SqlParams params = new SqlParams();
    String after = ListRowsTool.after(List.of(new ListRowsTool.SortKey(status, true), new ListRowsTool.SortKey(id, false)),
        new JsonArray().add("m").add("7"), params);
    assertEquals("(\"odd\"\"name\" < $1::text::text) OR (\"odd\"\"name\" = $2::text::text AND \"id\" > $3::text::bigint)", after);
    String afterNull = ListRowsTool.after(List.of(new ListRowsTool.SortKey(status, false), new ListRowsTool.SortKey(id, false)),
        new JsonArray().addNull().add("7"), new SqlParams());
    assertEquals("(\"odd\"\"name\" IS NULL AND \"id\" > $1::text::bigint)", afterNull);
  }

}
