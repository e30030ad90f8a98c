package dev.tidemark.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CallerScopesTest {

  @Test
  void aTokenCallerCarriesNoScopesOnTheWireAndIsNotLimitedByThem() {
    Caller c = new Caller("id", "name", "role", Access.READ_ONLY, List.of("*"));
    assertFalse(c.toJson().containsKey("scopes"));
    assertNull(Caller.fromJson(c.toJson()).scopes());
    assertTrue(c.hasScope("tidemark:write"));
  }

  @Test
  void anOAuthCallersScopesSurviveTheBus() {
    Caller c = new Caller("oauth:s", "oauth:s", "role", Access.READ_ONLY, List.of("*"), List.of("tidemark:read"));
    assertEquals(c, Caller.fromJson(c.toJson()));
    assertFalse(c.hasScope("tidemark:write"));
  }
}
