package dev.tidemark.auth.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a verified token's claims make of the caller; the signature side is OAuthIT's. */
class JwtClaimsTest {

  private static final String ISSUER = "https://login.microsoftonline.com/t/v2.0";
  private static final long NOW = 1_800_000_000L;
  private final Vertx vertx = Vertx.vertx();
  private final Authenticator none = authorization -> Future.failedFuture("unused");

  @AfterEach
  void close() {
    vertx.close();
  }

  private JwtAuthenticator entraShaped() {
    return new JwtAuthenticator(vertx, new OAuthConfig(ISSUER, "", "api-client-id", "roles", List.of("tidemark_reader", "tidemark_writer"),
        30, 60, 3600), none);
  }

  private static JsonObject claims() {
    return new JsonObject().put("iss", ISSUER).put("aud", "api-client-id").put("sub", "pairwise").put("exp", NOW + 60)
        .put("roles", new JsonArray().add("Other.Role").add("tidemark_writer")).put("scp", "tidemark:read tidemark:write");
  }

  @Test
  void anEntraShapedTokenIsItsAppRoleWithTheScopesOfScp() {
    Caller c = entraShaped().caller(claims(), "https://tidemark.example.com/mcp", NOW);
    assertEquals("oauth:pairwise", c.id());
    assertEquals("tidemark_writer", c.pgRole());
    assertEquals(List.of("tidemark:read", "tidemark:write"), c.scopes());
    assertEquals(Access.READ_WRITE, c.access());
  }

  @Test
  void theConfiguredAudienceReplacesTheResourceAndTheLeewayHolds() {
    JwtAuthenticator a = entraShaped();
    assertEquals("tidemark_writer", a.caller(claims().put("exp", NOW - 29), null, NOW).pgRole());
    assertTrue(assertThrows(JwtAuthenticator.Refused.class, () -> a.caller(claims().put("exp", NOW - 30), null, NOW))
        .getMessage().contains("expired"));
    assertTrue(assertThrows(JwtAuthenticator.Refused.class,
        () -> a.caller(claims().put("aud", "https://tidemark.example.com/mcp"), "https://tidemark.example.com/mcp", NOW))
        .reason.contains("not api-client-id"));
  }

  @Test
  void scopesComeFromScopeAndFromScpAsAStringOrAnArray() {
    assertEquals(List.of("a", "b", "c"), JwtAuthenticator.scopes(new JsonObject().put("scope", "a  b").put("scp", new JsonArray().add("c").add("a"))));
    assertEquals(List.of(), JwtAuthenticator.scopes(new JsonObject()));
  }

  @Test
  void aReadOnlyGrantIsAReadOnlyCaller() {
    assertEquals(Access.READ_ONLY, entraShaped().caller(claims().put("scp", "tidemark:read"), null, NOW).access());
  }

  @Test
  void aLibraryErrorIsLoggedWithoutTheInputItQuotes() {
    assertEquals("IllegalStateException: Failed to decode: Unexpected character",
        JwtAuthenticator.brief(new IllegalStateException("Failed to decode: Unexpected character at [Source: eyJhbGci...; line: 1]\nmore")));
  }
}
