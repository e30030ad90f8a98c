package dev.tidemark.gateway.impl.resource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonArray;
import java.util.List;
import org.junit.jupiter.api.Test;

class ResourceUrisTest {

  @Test
  void aCompositeKeyIsWrittenOneWayAndReadBack() {
    List<String> key = List.of("17", "a,b/c d%é");
    String uri = ResourceUris.row("public.order_items", key);
    assertEquals("tidemark://row/public.order_items/17,a%2Cb%2Fc%20d%25%C3%A9", uri);
    ResourceUris.Parsed parsed = ResourceUris.parse(uri);
    assertEquals("row", parsed.kind());
    assertEquals("public.order_items", parsed.table());
    assertEquals(key, parsed.key());
  }

  @Test
  void tableUrisAndMalformedUris() {
    assertEquals(new ResourceUris.Parsed("table", "orders", List.of()), ResourceUris.parse("tidemark://table/orders"));
    assertNull(ResourceUris.parse("tidemark://row/orders"));
    assertNull(ResourceUris.parse("tidemark://row/orders/"));
    assertNull(ResourceUris.parse("tidemark://table/"));
    assertNull(ResourceUris.parse("tidemark://table/a%ZZ"));
    assertNull(ResourceUris.parse("file:///etc/passwd"));
  }

  @Test
  void aChangeKeyBecomesStrings() {
    assertEquals(List.of("5", "x"), ResourceUris.keyOf(new JsonArray().add(5).add("x")));
    assertNull(ResourceUris.keyOf(new io.vertx.core.json.JsonObject().put("a", 1)), "a table without a key has no row URI");
  }

  @Test
  void aNulInATableOrKeyNamesNoResource() {
    assertNull(ResourceUris.parse("tidemark://table/custo%00mers"));
    assertNull(ResourceUris.parse("tidemark://row/customers/a%00b"));
    assertNull(ResourceUris.parse("tidemark://row/cus%00tomers/1"));
  }
}
