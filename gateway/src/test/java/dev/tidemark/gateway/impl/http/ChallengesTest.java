package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.config.TidemarkConfig;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ChallengesTest {

  private final Challenges oauth = new Challenges(TidemarkConfig.from(Map.of(
      ConfigKey.HTTP_PUBLIC_URL, "https://tidemark.example.com",
      ConfigKey.AUTH_OAUTH_ISSUER, "https://login.example.com/realms/agents",
      ConfigKey.AUTH_OAUTH_ROLES, "reader")));

  @Test
  void withoutAnIssuerThe401KeepsThePlainBearerChallenge() {
    assertEquals("Bearer realm=\"tidemark\", error=\"invalid_token\"", new Challenges(TidemarkConfig.from(Map.of())).unauthorized(false, null));
  }

  @Test
  void the401NamesTheEndpointsOwnMetadataAndTheReadScope() {
    assertEquals("Bearer realm=\"tidemark\", resource_metadata=\"https://tidemark.example.com/.well-known/oauth-protected-resource/mcp\", "
        + "scope=\"tidemark:read\"", oauth.unauthorized(false, null));
    assertEquals("Bearer realm=\"tidemark\", error=\"invalid_token\", resource_metadata=\"https://tidemark.example.com/.well-known/"
        + "oauth-protected-resource/mcp/main\", scope=\"tidemark:read\"", oauth.unauthorized(true, "main"));
  }

  @Test
  void eachEndpointsMetadataNamesItsOwnResourceAndTheIssuer() {
    JsonObject doc = oauth.metadata("main");
    assertEquals("https://tidemark.example.com/mcp/main", doc.getString("resource"));
    assertEquals("https://login.example.com/realms/agents", doc.getJsonArray("authorization_servers").getString(0));
    assertEquals("[\"tidemark:read\",\"tidemark:write\"]", doc.getJsonArray("scopes_supported").encode());
    assertEquals("https://tidemark.example.com/mcp", oauth.metadata(null).getString("resource"));
  }

  @Test
  void the403StepUpNamesTheScopeAndTheMetadata() {
    assertEquals("Bearer error=\"insufficient_scope\", scope=\"tidemark:read tidemark:write\", resource_metadata=\""
            + "https://tidemark.example.com/.well-known/oauth-protected-resource/mcp\", error_description=\"needs write\"",
        oauth.insufficientScope("tidemark:read tidemark:write", null, "needs write"));
  }
}
