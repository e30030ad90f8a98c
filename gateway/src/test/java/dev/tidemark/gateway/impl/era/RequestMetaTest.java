package dev.tidemark.gateway.impl.era;

import dev.tidemark.gateway.impl.jsonrpc.RpcFailure;
import dev.tidemark.gateway.impl.spec.JsonRpc;
import dev.tidemark.gateway.impl.spec.Meta;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RequestMetaTest {

  private static final ParamHeaders HEADERS = new ParamHeaders(Map.of("routed", new JsonObject().put("type", "object")
      .put("properties", new JsonObject().put("region", new JsonObject().put("type", "string").put(ParamHeaders.ANNOTATION, "Region")))));

  private static JsonObject meta() {
    return new JsonObject().put(Meta.VERSION, "2026-07-28").put(Meta.CAPABILITIES, new JsonObject());
  }

  @Test
  void aRequestWithoutMetaOrItsVersionIsRefusedWith400AndInvalidParams() {
    RpcFailure noMeta = RequestMeta.versionFault(new JsonObject());
    assertEquals(JsonRpc.INVALID_PARAMS, noMeta.code());
    assertEquals(400, noMeta.httpStatus());
    assertTrue(noMeta.getMessage().startsWith("params._meta is missing"), noMeta.getMessage());
    assertEquals(400, RequestMeta.versionFault(new JsonObject().put("_meta", new JsonObject())).httpStatus());
    assertNotNull(RequestMeta.versionFault(new JsonObject().put("_meta", new JsonObject().put(Meta.VERSION, 20260728))));
    assertNull(RequestMeta.versionFault(new JsonObject().put("_meta", meta())));
  }

  @Test
  void capabilitiesAreRequiredButClientInfoIsNot() {
    MultiMap none = MultiMap.caseInsensitiveMultiMap();
    RpcFailure noCaps = RequestMeta.fault("tools/list", new JsonObject().put("_meta", meta().copy()
        .put(Meta.CAPABILITIES, (Object) null)), none, HEADERS);
    assertEquals(400, noCaps.httpStatus());
    assertEquals(JsonRpc.INVALID_PARAMS, noCaps.code());
    assertNotNull(RequestMeta.fault("tools/list", new JsonObject().put("_meta", meta().put(Meta.CAPABILITIES, "all")), none, HEADERS));
    assertNull(RequestMeta.fault("tools/list", new JsonObject().put("_meta", meta()), none, HEADERS), "no clientInfo, still served");
  }

  @Test
  void retryFieldsOfTheWrongTypeAreInvalidParams() {
    MultiMap none = MultiMap.caseInsensitiveMultiMap();
    RpcFailure responses = RequestMeta.fault("tools/call", new JsonObject().put("_meta", meta()).put("inputResponses", 12), none, HEADERS);
    assertEquals(JsonRpc.INVALID_PARAMS, responses.code());
    assertTrue(responses.getMessage().startsWith("params.inputResponses must be an object"), responses.getMessage());
    assertTrue(RequestMeta.fault("tools/call", new JsonObject().put("_meta", meta()).put("requestState", new JsonObject()), none, HEADERS)
        .getMessage().startsWith("params.requestState must be the string"));
    assertNull(RequestMeta.fault("tools/call", new JsonObject().put("_meta", meta()).put("inputResponses", (Object) null), none, HEADERS),
        "null is no answer at all");
  }

  @Test
  void aToolCallsParamHeadersAreCheckedAndOnlyForToolsCall() {
    JsonObject call = new JsonObject().put("_meta", meta()).put("name", "routed").put("arguments", new JsonObject().put("region", "eu"));
    RpcFailure missing = RequestMeta.fault("tools/call", call, MultiMap.caseInsensitiveMultiMap(), HEADERS);
    assertEquals(JsonRpc.HEADER_MISMATCH, missing.code());
    assertEquals(400, missing.httpStatus());
    assertNull(RequestMeta.fault("tools/call", call, MultiMap.caseInsensitiveMultiMap().add("Mcp-Param-Region", "eu"), HEADERS));
    assertNull(RequestMeta.fault("prompts/get", call, MultiMap.caseInsensitiveMultiMap(), HEADERS));
  }
}
