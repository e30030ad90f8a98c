package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.ToolResults;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/** The events tools as a worker calls them through a node, for the tests of nodes and clusters. */
final class Events {

  static final Duration WAIT = Duration.ofSeconds(60);

  private Events() {}

  static JsonObject next(String consumer, String table, int leaseSeconds) {
    return new JsonObject().put("consumer", consumer).put("tables", new JsonArray().add(table)).put("lease_seconds", leaseSeconds)
        .put("wait_ms", 500);
  }

  /** Leases until an event of row {@code id} matching {@code wanted} comes; other events are acknowledged. */
  static JsonObject await(McpHttpClient client, JsonObject args, int id, Predicate<JsonObject> wanted) {
    AtomicReference<JsonObject> found = new AtomicReference<>();
    dev.tidemark.testsupport.Await.that("an event of row " + id, WAIT, () -> {
      JsonObject out = ToolResults.ok(client, "events_next", args);
      for (Object o : out.getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        if (keyOf(e) == id && wanted.test(e) && found.get() == null) {
          found.set(e);
        } else {
          ToolResults.ok(client, "events_ack", new JsonObject().put("consumer", args.getString("consumer"))
              .put("event_ids", new JsonArray().add(e.getString("event_id"))).put("lease_token", e.getString("lease_token")));
        }
      }
      return found.get() != null;
    });
    return found.get();
  }

  static int keyOf(JsonObject event) {
    Object key = event.getJsonObject("change").getValue("key");
    return key instanceof JsonArray a ? a.getInteger(0) : ((JsonObject) key).getInteger("id");
  }

  static JsonObject ackArgs(String consumer, JsonObject event) {
    return new JsonObject().put("consumer", consumer).put("event_ids", new JsonArray().add(event.getString("event_id")))
        .put("lease_token", event.getString("lease_token"));
  }

  /** Leases for {@code ms} and returns the events of row {@code id} seen meanwhile (acking each). */
  static List<JsonObject> seenFor(McpHttpClient client, JsonObject args, int id, long ms) {
    List<JsonObject> seen = new ArrayList<>();
    long deadline = System.currentTimeMillis() + ms;
    while (System.currentTimeMillis() < deadline) {
      for (Object o : ToolResults.ok(client, "events_next", args).getJsonArray("events")) {
        JsonObject e = (JsonObject) o;
        if (keyOf(e) == id) {
          seen.add(e);
        }
        ToolResults.ok(client, "events_ack", ackArgs(args.getString("consumer"), e));
      }
    }
    return seen;
  }

  /**
   * Hands {@code first} (delivery 1 of row {@code id}) back until it is dead-lettered (the node's
   * events.max-deliveries is 2), sees it counted by events_status, re-drives it with events_seek
   * (the caller is an events administrator), and acknowledges it when it comes again.
   */
  static void deadLetterThenReDrive(McpHttpClient admin, JsonObject args, int id, JsonObject first) {
    String consumer = args.getString("consumer");
    ToolResults.ok(admin, "events_nack", ackArgs(consumer, first));
    JsonObject two = await(admin, args, id, e -> e.getInteger("delivery_count") == 2);
    ToolResults.ok(admin, "events_nack", ackArgs(consumer, two));
    dev.tidemark.testsupport.Await.that("the dead letter", WAIT, () -> {
      assertTrue(seenFor(admin, args, id, 500).isEmpty(), "a third delivery is not shown: max-deliveries is 2");
      return ToolResults.ok(admin, "events_status", new JsonObject().put("consumer", consumer)).getLong("dead_lettered") == 1;
    });
    JsonObject seek = ToolResults.ok(admin, "events_seek", new JsonObject().put("consumer", consumer).put("to", "dead_letters"));
    assertEquals(1, seek.getInteger("redriven"), seek::encode);
    JsonObject redriven = await(admin, args, id, e -> true);
    assertEquals(1, redriven.getInteger("delivery_count"), "a re-driven event starts again: " + redriven.encode());
    assertEquals(first.getString("event_id"), redriven.getString("event_id"));
    ToolResults.ok(admin, "events_ack", ackArgs(consumer, redriven));
    JsonObject status = ToolResults.ok(admin, "events_status", new JsonObject().put("consumer", consumer));
    assertEquals(0, status.getLong("dead_lettered"), status::encode);
    assertEquals(1, status.getLong("redriven"), status::encode);
  }
}
