package dev.tidemark.query;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/** A page never mixes two states: once a table a cursor reads has changed, the next page is CURSOR_STALE. */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CursorStaleIT {

  private SharedInfra infra;
  private ServiceHarness harness;

  @BeforeAll
  void start(SharedInfra infra) {
    this.infra = infra;
    harness = QueryRole.withChangelog(infra, ServiceHarness.DATABASE, Map.of());
  }

  @AfterAll
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private JsonObject page(String tool, JsonObject arguments) {
    return harness.ok(ServiceHarness.READER, tool, arguments);
  }

  @Test
  void aChangeToTheListedTableMakesTheNextPageStaleAndAnUnrelatedChangeDoesNot() {
    JsonObject first = page("list_rows", new JsonObject().put("table", "support_tickets").put("limit", 10));
    String cursor = first.getString("next_cursor");
    assertNotNull(cursor);

    sql(infra, ServiceHarness.DATABASE, "UPDATE products SET description = description || '' WHERE id = 7");
    // a change to another table leaves the cursor fresh
    JsonObject second = page("list_rows", new JsonObject().put("table", "support_tickets").put("limit", 10).put("cursor", cursor));
    String next = second.getString("next_cursor");

    sql(infra, ServiceHarness.DATABASE, "UPDATE support_tickets SET labels = labels WHERE id = 250");
    harness.error(ServiceHarness.READER, "list_rows",
        new JsonObject().put("table", "support_tickets").put("limit", 10).put("cursor", next), "CURSOR_STALE");
  }

  @Test
  void aQueryCursorGoesStaleWhenAnyTableItReadsChanges() {
    String sql = "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id";
    JsonObject first = page("query", new JsonObject().put("sql", sql).put("limit", 50));
    String cursor = first.getString("next_cursor");
    assertNotNull(cursor);
    sql(infra, ServiceHarness.DATABASE, "UPDATE customers SET notes = coalesce(notes, '') WHERE id = 499");
    // customers is read through the join
    harness.error(ServiceHarness.READER, "query", new JsonObject().put("sql", sql).put("limit", 50).put("cursor", cursor), "CURSOR_STALE");
  }
}
