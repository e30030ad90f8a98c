package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.keys.Signer;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestStatesTest {

  private static final RequestStates STATES = new RequestStates(new Signer("a secret of thirty-two bytes....".getBytes(StandardCharsets.UTF_8)));

  private static Call call(String callerId, JsonObject params) {
    JsonObject responses = params.getValue("inputResponses") instanceof JsonObject r ? r : null;
    return new Call(true, new Caller(callerId, callerId, "reader", Access.READ_ONLY, List.of("*")), "main", null, null, 1,
        "tools/call", params, null, "2026-07-28", new JsonObject(), null, null, responses, new Cancellation(), 0, null);
  }

  private static JsonObject params(JsonObject arguments) {
    return new JsonObject().put("name", "multi_round").put("arguments", arguments);
  }

  @Test
  void aStateCarriesEarlierAnswersIntoTheNextRoundUnderTheRetrysOwnAnswers() {
    JsonObject step1 = new JsonObject().put("action", "accept").put("content", new JsonObject().put("name", "Ada"));
    String state = STATES.issue(call("c1", params(new JsonObject().put("a", 1).put("b", 2))), new JsonObject().put("step1", step1));
    JsonObject step2 = new JsonObject().put("action", "accept");
    Call retry = call("c1", params(new JsonObject().put("b", 2).put("a", 1)).put("requestState", state)
        .put("inputResponses", new JsonObject().put("step2", step2)));
    assertNull(STATES.fault(retry), "the same arguments in another order are the same request");
    assertEquals(new JsonObject().put("step1", step1).put("step2", step2), STATES.answers(retry));
  }

  @Test
  void anAlteredForeignOrMisplacedStateIsRefused() {
    JsonObject args = new JsonObject().put("a", 1);
    String state = STATES.issue(call("c1", params(args)), new JsonObject());
    assertNull(STATES.fault(call("c1", params(args).put("requestState", state))));
    assertNotNull(STATES.fault(call("c1", params(args).put("requestState", state + "-TAMPERED"))));
    assertNotNull(STATES.fault(call("c2", params(args).put("requestState", state))), "another caller's");
    assertNotNull(STATES.fault(call("c1", params(new JsonObject().put("a", 2)).put("requestState", state))), "other arguments");
    assertNotNull(STATES.fault(call("c1", params(args).put("name", "other_tool").put("requestState", state))), "another tool");
    String foreign = new RequestStates(new Signer("another secret, thirty-two bytes".getBytes(StandardCharsets.UTF_8)))
        .issue(call("c1", params(args)), new JsonObject());
    RpcFailureAssert.invalidParams(STATES.fault(call("c1", params(args).put("requestState", foreign))));
    assertTrue(STATES.answers(call("c1", params(args).put("requestState", "garbage"))).isEmpty(), "a refused state carries nothing");
  }

  /** The refusal says what to do next. */
  private static final class RpcFailureAssert {
    static void invalidParams(RpcFailure f) {
      assertNotNull(f);
      assertEquals(JsonRpc.INVALID_PARAMS, f.code());
      assertTrue(f.getMessage().contains("Send the request again without requestState"), f.getMessage());
    }
  }
}
