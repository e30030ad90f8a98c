package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.keys.Signer;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class InputRequestsTest {

  private static final RequestStates STATES = new RequestStates(new Signer("thirty-two bytes of test secret!".getBytes(StandardCharsets.UTF_8)));
  private static final JsonObject FORM = new JsonObject().put("message", "Name?").put("requestedSchema", new JsonObject().put("type", "object"));

  private static Call call(JsonObject capabilities, JsonObject params) {
    JsonObject responses = params.getValue("inputResponses") instanceof JsonObject r ? r : null;
    return new Call(true, new Caller("c", "c", "reader", Access.READ_ONLY, List.of("*")), "main", null, null, 1, "tools/call", params,
        null, "2026-07-28", capabilities, null, null, responses, new Cancellation(), 0, null);
  }

  private static final JsonObject ALL = new JsonObject().put("elicitation", new JsonObject()).put("sampling", new JsonObject());

  @Test
  void unansweredQuestionsMakeOneInputRequiredResultUnderTheirKeys() {
    InputRequests inputs = new InputRequests(call(ALL, new JsonObject().put("name", "t")), STATES);
    Future<JsonObject> name = inputs.request("user_name", "elicitation/create", FORM);
    Future<JsonObject> other = inputs.request(inputs.nextKey(), "sampling/createMessage", new JsonObject());
    assertInstanceOf(InputRequired.class, name.cause());
    assertInstanceOf(InputRequired.class, other.cause());
    JsonObject result = inputs.result();
    assertEquals("input_required", result.getString("resultType"));
    assertEquals(List.of("user_name", "input-0"), List.copyOf(result.getJsonObject("inputRequests").fieldNames()));
    assertEquals("elicitation/create", result.getJsonObject("inputRequests").getJsonObject("user_name").getString("method"));
    assertTrue(result.getString("requestState").contains("."), "a signed state");
  }

  @Test
  void answersOfEarlierRoundsComeBackFromTheStateAndNewOnesFromInputResponses() {
    JsonObject round1 = new JsonObject().put("name", "t");
    InputRequests first = new InputRequests(call(ALL, round1.copy().put("inputResponses",
        new JsonObject().put("step1", new JsonObject().put("action", "accept")).put("extra", new JsonObject()))), STATES);
    assertTrue(first.request("step1", "elicitation/create", FORM).succeeded());
    first.request("step2", "elicitation/create", FORM);
    String state = first.result().getString("requestState");
    JsonObject carried = STATES.answers(call(ALL, round1.copy().put("requestState", state)));
    assertEquals(List.of("step1"), List.copyOf(carried.fieldNames()), "only the answers used travel, not the extra key");

    InputRequests second = new InputRequests(call(ALL, round1.copy().put("requestState", state)
        .put("inputResponses", new JsonObject().put("step2", new JsonObject().put("action", "decline")))), STATES);
    assertTrue(second.request("step1", "elicitation/create", FORM).succeeded());
    assertEquals("decline", second.request("step2", "elicitation/create", FORM).result().getString("action"));
    assertTrue(second.resumed());
  }

  @Test
  void aClientWithoutTheCapabilityGetsMinus32021AndAnAnswerThatIsNoObjectIsInvalidParams() {
    InputRequests inputs = new InputRequests(call(new JsonObject().put("sampling", new JsonObject()),
        new JsonObject().put("name", "t").put("inputResponses", new JsonObject().put("greeting", 12345))), STATES);
    RpcFailure missing = (RpcFailure) inputs.request("user_name", "elicitation/create", FORM).cause();
    assertEquals(JsonRpc.MISSING_REQUIRED_CLIENT_CAPABILITY, missing.code());
    assertEquals(400, missing.httpStatus());
    assertEquals(new JsonObject().put("requiredCapabilities", new JsonObject().put("elicitation", new JsonObject())), missing.data());
    RpcFailure bad = (RpcFailure) inputs.request("greeting", "sampling/createMessage", new JsonObject()).cause();
    assertEquals(JsonRpc.INVALID_PARAMS, bad.code());
    assertTrue(bad.getMessage().contains("inputResponses.greeting must be an object"), bad.getMessage());
  }
}
