package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every message shape survives a round trip, ignores fields it does not know and refuses what it cannot use. */
class MessageShapesTest {

  private static final Caller CALLER = new Caller("id-1", "alice", "tidemark_reader", Access.READ_ONLY, List.of("main"));

  @Test
  void aToolRequestRoundTripsAndIgnoresUnknownFields() {
    ToolRequest request = new ToolRequest("r-1", "main", "status", new JsonObject().put("a", 1), CALLER);
    JsonObject wire = request.toJson().put("added_in_a_later_version", true);
    wire.getJsonObject("caller").put("also_new", "x");
    assertEquals(request, ToolRequest.fromJson(wire));
  }

  @Test
  void aToolRequestCarriesItsTraceContextOnlyWhenItHasOne() {
    String traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    ToolRequest traced = new ToolRequest("r-1", "main", "status", null, CALLER).withTrace(traceparent, "vendor=x");
    JsonObject wire = traced.toJson();
    assertEquals(traceparent, wire.getString("traceparent"));
    assertEquals(traced, ToolRequest.fromJson(wire));

    JsonObject untraced = new ToolRequest("r-1", "main", "status", null, CALLER).toJson();
    assertFalse(untraced.containsKey("traceparent"), "absent, not null");
    assertFalse(untraced.containsKey("tracestate"));
    assertNull(ToolRequest.fromJson(untraced.copy().put("traceparent", 42)).traceparent(), "a value of the wrong type is no trace");
    assertNull(new ToolRequest("r-1", "main", "status", null, CALLER, null, "vendor=x").tracestate(), "no tracestate without a traceparent");
  }

  @Test
  void aToolRequestWithoutItsRequiredFieldsIsRefused() {
    JsonObject wire = new ToolRequest("r-1", "main", "status", null, CALLER).toJson();
    for (String field : List.of("request_id", "database", "tool", "caller")) {
      JsonObject broken = wire.copy();
      broken.remove(field);
      assertThrows(RuntimeException.class, () -> ToolRequest.fromJson(broken), field);
    }
    JsonObject badAccess = wire.copy();
    badAccess.getJsonObject("caller").put("access", "root");
    assertThrows(IllegalArgumentException.class, () -> ToolRequest.fromJson(badAccess));
  }

  @Test
  void aReplyIsEitherAResultOrAnErrorAndOptionalFieldsAreAbsent() {
    ToolReply ok = ToolReply.ok("done", new JsonObject().put("x", 1));
    JsonObject okWire = ok.toJson();
    assertFalse(okWire.containsKey("rows"));
    assertFalse(okWire.containsKey("error"));
    assertEquals(ok, ToolReply.fromJson(okWire.put("unknown", 1)));

    ToolReply rows = ToolReply.ok("two rows", new JsonObject(), new JsonArray().add(1).add(2));
    assertEquals(rows, ToolReply.fromJson(rows.toJson()));

    ToolReply failed = ToolReply.failed(new ToolException(ErrorCode.NOT_FOUND, "no such table", new JsonObject().put("table", "t")));
    JsonObject failedWire = failed.toJson();
    assertTrue(ToolReply.fromJson(failedWire).isError());
    assertEquals("NOT_FOUND", failedWire.getJsonObject("error").getString("code"));
    assertEquals("t", failedWire.getJsonObject("error").getString("table"));
    assertNull(failedWire.getValue("structured"));
  }

  @Test
  void aCallerReachesOnlyItsDatabasesUnlessItHasTheWildcard() {
    assertTrue(CALLER.mayReach("main"));
    assertFalse(CALLER.mayReach("billing"));
    assertTrue(new Caller("i", "n", "r", Access.READ_WRITE, List.of("*")).mayReach("billing"));
  }

  @Test
  void addressesAreVersionedAndNameTheDatabase() {
    assertEquals("tidemark.query.v1.main", Addresses.query("main"));
    assertEquals("tidemark.command.v1.main", Addresses.forService(Service.COMMAND, "main"));
    assertEquals("tidemark.changelog.v1.billing", Addresses.changelog("billing"));
  }

  @Test
  void theGatewaysClusterAddressesAndMapsKeepTheirWireNames() {
    // gateways of the previous release share these with new ones during a rolling upgrade
    assertEquals("tidemark.gateway.cancel.v1", Addresses.GATEWAY_CANCEL_V1);
    assertEquals("tidemark.client-reply.v1.tidemark-1", Addresses.clientReply("tidemark-1"));
    assertEquals("tidemark.session.v1.ab12", Addresses.session("ab12"));
    assertEquals("tidemark.listen.v1.l-1", Addresses.listen("l-1"));
    assertEquals("tidemark.sessions.v1", Addresses.SESSIONS_MAP);
    assertEquals("tidemark.events.v2", Addresses.EVENTS_MAP);
    assertEquals("tidemark.subscriptions.v1", Addresses.SUBSCRIPTIONS_MAP);
    assertEquals("tidemark.subscribed.v1", Addresses.SUBSCRIBED_V1);
    assertEquals("tidemark.notified.v1", Addresses.NOTIFIED_MAP);
    assertEquals("tidemark.request-state-keys.v1", Addresses.REQUEST_STATE_KEYS_MAP);
  }
}
