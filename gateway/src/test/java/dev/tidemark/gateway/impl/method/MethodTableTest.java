package dev.tidemark.gateway.impl.method;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.call.Call;
import dev.tidemark.gateway.impl.call.Cancellation;
import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

class MethodTableTest {

  private final MethodTable table = new MethodTable()
      .both("tools/list", call -> Future.succeededFuture(new JsonObject().put("by", "tools/list")))
      .legacyOnly("ping", call -> Future.succeededFuture(new JsonObject().put("by", "ping")))
      .modernOnly("server/discover", call -> Future.succeededFuture(new JsonObject().put("by", "server/discover")))
      .both("throws", call -> {
        throw new RpcFailure(JsonRpc.INVALID_PARAMS, "params.uri must be a non-empty string.");
      });

  static Call call(boolean modern, String method) {
    return new Call(modern, new Caller("c", "alice", "r", Access.READ_ONLY, List.of("*")), "main", modern ? null : "s", null, 1, method,
        new JsonObject(), null, modern ? "2026-07-28" : "2025-11-25", new JsonObject(), null, null, null, new Cancellation(), 0, null);
  }

  private static JsonObject error(Future<JsonObject> answer, int status) {
    RpcFailure f = assertInstanceOf(RpcFailure.class, answer.cause());
    assertEquals(status, f.httpStatus());
    return f.toMessage(1).getJsonObject("error");
  }

  @Test
  void eachMethodGoesToItsHandlerInTheErasThatServeIt() {
    assertEquals("tools/list", table.dispatch(call(false, "tools/list")).result().getString("by"));
    assertEquals("tools/list", table.dispatch(call(true, "tools/list")).result().getString("by"));
    assertEquals("ping", table.dispatch(call(false, "ping")).result().getString("by"));
    assertEquals("server/discover", table.dispatch(call(true, "server/discover")).result().getString("by"));
  }

  @Test
  void aStatelessRequestForASessionMethodIsToldItsEraWith404() {
    for (String method : List.of("ping", "initialize")) {
      JsonObject error = error(table.dispatch(call(true, method)), 404);
      assertEquals(JsonRpc.METHOD_NOT_FOUND, error.getInteger("code"));
      assertEquals(method + " belongs to the 2025-11-25 era; this request speaks 2026-07-28.", error.getString("message"));
    }
  }

  @Test
  void anUnknownMethodIsMethodNotFoundWith404OnlyOnTheStatelessEra() {
    JsonObject legacy = error(table.dispatch(call(false, "server/discover")), 200);
    assertEquals(JsonRpc.METHOD_NOT_FOUND, legacy.getInteger("code"));
    assertTrue(legacy.getString("message").startsWith("Method not found; this server speaks MCP 2026-07-28, 2025-11-25"));
    assertEquals(JsonRpc.METHOD_NOT_FOUND, error(table.dispatch(call(true, "nope")), 404).getInteger("code"));
  }

  @Test
  void aHandlerThatThrowsAnRpcFailureAnswersWithIt() {
    JsonObject error = error(table.dispatch(call(false, "throws")), 200);
    assertEquals(JsonRpc.INVALID_PARAMS, error.getInteger("code"));
    assertEquals("params.uri must be a non-empty string.", error.getString("message"));
  }

  @Test
  void onlyTheStatelessEraGetsCacheHints() {
    assertEquals(new JsonObject().put("ttlMs", 5L).put("cacheScope", "public"),
        MethodTable.cacheable(call(true, "x"), new JsonObject(), 5, "public"));
    assertEquals(new JsonObject(), MethodTable.cacheable(call(false, "x"), new JsonObject(), 5, "public"));
  }
}
