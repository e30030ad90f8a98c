package dev.tidemark.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.NamedCatalog;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class NamedCatalogsTest {

  private static NamedCatalog serving(String... names) {
    JsonArray tools = new JsonArray();
    for (String name : names) {
      tools.add(new JsonObject().put("name", name).put("description", "d").put("kind", "read")
          .put("statement", "SELECT 1").put("roles", new JsonArray().add("tidemark_reader")));
    }
    return NamedCatalog.assemble(NamedCatalog.parse(new JsonObject().put("tools", tools), List.of(), "database."), Map.of(), Set.of());
  }

  @Test
  void eachNodesVertxHasItsOwnCatalogs() throws Exception {
    Vertx one = Vertx.vertx();
    Vertx two = Vertx.vertx();
    try {
      assertSame(NamedCatalogs.of(one), NamedCatalogs.of(one));
      assertNotSame(NamedCatalogs.of(one), NamedCatalogs.of(two));
      NamedCatalogs.of(one).install("app", serving("open_tickets"));
      assertEquals(NamedCatalog.EMPTY, NamedCatalogs.of(two).get("app"), "a database before its first load serves no named tools");
      assertEquals("open_tickets", NamedCatalogs.of(one).anyTool("open_tickets").orElseThrow().name());
      assertTrue(NamedCatalogs.of(two).anyTool("open_tickets").isEmpty());
    } finally {
      one.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      two.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void listenersHearADatabaseOnlyWhenTheToolsItServesChangeUntilTheyStop() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      NamedCatalogs catalogs = NamedCatalogs.of(vertx);
      List<String> heard = new CopyOnWriteArrayList<>();
      Runnable stop = catalogs.listen(heard::add);
      catalogs.install("quiet", NamedCatalog.EMPTY);
      catalogs.install("app", serving("open_tickets"));
      catalogs.install("app", serving("open_tickets"));
      catalogs.install("app", serving("open_tickets", "closed_tickets"));
      assertEquals(List.of("app", "app"), heard, "a first load without tools and a reload of the same tools are silent");
      stop.run();
      catalogs.install("app", serving());
      assertEquals(List.of("app", "app"), heard);
      assertTrue(catalogs.get("app").tools().isEmpty());
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
