package dev.tidemark.gateway.impl.consent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolCatalog;
import dev.tidemark.contract.ToolDescriptor;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolReply;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ConsentTest {

  private static final ToolDescriptor DELETE = ToolCatalog.find("delete_rows").orElseThrow();
  private static final ToolDescriptor QUERY = ToolCatalog.find("query").orElseThrow();
  private static final ToolReply DECISION = ToolReply.failed(new ToolException(ErrorCode.DECISION_REQUIRED, "needs consent",
      new JsonObject().put("question", "Delete 3 rows of orders?")));

  @Test
  void consentIsNeededWhenTheCommandServiceAsksForItAndTheCallDidNotConfirm() {
    assertTrue(Consent.needed(DELETE, new JsonObject(), DECISION));
    assertFalse(Consent.needed(DELETE, new JsonObject().put("confirm", true), DECISION));
    assertFalse(Consent.needed(QUERY, new JsonObject(), DECISION), "only a change tool's refusal asks the user");
    assertFalse(Consent.needed(DELETE, new JsonObject(), ToolReply.failed(new ToolException(ErrorCode.PLAN_CHANGED, "moved"))));
  }

  @Test
  void theElicitationAsksTheServicesQuestionWithOneRequiredBoolean() {
    JsonObject request = Consent.request(DECISION);
    assertEquals("form", request.getString("mode"));
    assertEquals("Delete 3 rows of orders?", request.getString("message"));
    JsonObject schema = request.getJsonObject("requestedSchema");
    assertEquals(new JsonArray().add(Consent.KEY), schema.getJsonArray("required"));
    assertEquals("boolean", schema.getJsonObject("properties").getJsonObject(Consent.KEY).getString("type"));
    assertEquals(false, schema.getJsonObject("properties").getJsonObject(Consent.KEY).getBoolean("default"));
  }

  @Test
  void onlyAnAcceptedFormWithTheBoxTickedAllowsTheChange() {
    assertTrue(Consent.allowed(new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", true))));
    assertFalse(Consent.allowed(new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", false))));
    assertFalse(Consent.allowed(new JsonObject().put("action", "accept").put("content", new JsonObject().put("confirm", "true"))));
    assertFalse(Consent.allowed(new JsonObject().put("action", "decline").put("content", new JsonObject().put("confirm", true))));
    assertFalse(Consent.allowed(new JsonObject().put("action", "accept")));
    assertFalse(Consent.allowed(null));
  }
}
