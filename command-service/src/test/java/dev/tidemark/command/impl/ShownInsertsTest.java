package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class ShownInsertsTest {

  private static final ShownInserts.Target ORDER = new ShownInserts.Target("public", "order");
  private static final ShownInserts.Target LINE = new ShownInserts.Target("public", "line");

  private static JsonObject row(String table, String op, int id) {
    JsonObject r = new JsonObject().put("table", table).put("op", op).put("key", new JsonArray().add(id));
    if (!"DELETE".equals(op)) {
      r.put("after", new JsonObject().put("id", id));
    }
    return r;
  }

  @Test
  void theInsertedRowsOfTheTargetsAreWrittenInTheOrderShownOneRunPerStretchOfOneTable() {
    JsonArray shown = new JsonArray()
        .add(row("public.order", "INSERT", 1))
        .add(row("public.audit", "INSERT", 9))  // a trigger's row: the trigger writes it again
        .add(row("public.order", "INSERT", 2))
        .add(row("public.line", "INSERT", 10))
        .add(row("public.order", "UPDATE", 7))  // not inserted: never written as shown
        .add(row("public.order", "INSERT", 3));
    List<ShownInserts.Run> runs = ShownInserts.runs(shown, List.of(ORDER, LINE));
    assertEquals(List.of(ORDER, LINE, ORDER), runs.stream().map(ShownInserts.Run::table).toList());
    assertEquals(List.of(List.of(1, 2), List.of(10), List.of(3)),
        runs.stream().map(r -> r.rows().stream().map(a -> a.getInteger("id")).toList()).toList());
  }
}
