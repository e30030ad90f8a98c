package dev.tidemark.gateway.impl.call;

import dev.tidemark.gateway.impl.call.Eras;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.gateway.impl.spec.Meta;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

class ErasTest {

  @Test
  void aRequestIsStatelessWhenItsMetaNamesAVersionOrItsHeaderNamesAStatelessOne() {
    assertTrue(Eras.modern(new JsonObject().put(Meta.VERSION, "2026-07-28"), null));
    assertTrue(Eras.modern(new JsonObject().put(Meta.VERSION, "1999-01-01"), "2025-11-25"), "the body decides; the era then checks the header");
    assertTrue(Eras.modern(new JsonObject(), "2026-07-28"));
    assertFalse(Eras.modern(new JsonObject(), "2025-11-25"));
    assertFalse(Eras.modern(new JsonObject(), null));
  }

  @Test
  void aResponseMayBePrecededByProgressLogsOrAServerRequestTheClientCanAnswer() {
    assertTrue(Eras.mayPrecedeResponse("t", null, null));
    assertTrue(Eras.mayPrecedeResponse(null, "info", null));
    assertTrue(Eras.mayPrecedeResponse(null, null, new JsonObject().put("sampling", new JsonObject())));
    assertFalse(Eras.mayPrecedeResponse(null, null, new JsonObject().put("experimental", new JsonObject())));
    assertFalse(Eras.mayPrecedeResponse(null, null, null));
  }

  @Test
  void aCatalogueReadSaysNothingFirstUnlessAskedForProgressOrLogsItWouldSend() {
    JsonObject host = new JsonObject().put("elicitation", new JsonObject()).put("sampling", new JsonObject()).put("roots", new JsonObject());
    assertFalse(Eras.mayPrecedeResponse(null, null, host, Eras.Voice.READ));
    assertFalse(Eras.mayPrecedeResponse(null, "error", host, Eras.Voice.READ), "a read logs nothing above warning");
    assertTrue(Eras.mayPrecedeResponse(null, "warning", host, Eras.Voice.READ));
    assertTrue(Eras.mayPrecedeResponse("t", null, null, Eras.Voice.READ));
    assertTrue(Eras.mayPrecedeResponse(null, null, host, Eras.Voice.CHANGE), "a change may ask for consent");
    assertFalse(Eras.mayPrecedeResponse(null, null, new JsonObject().put("sampling", new JsonObject()), Eras.Voice.CHANGE),
        "consent is asked by elicitation only");
    assertTrue(Eras.mayPrecedeResponse(null, "emergency", null, Eras.Voice.ANY));
  }
}
