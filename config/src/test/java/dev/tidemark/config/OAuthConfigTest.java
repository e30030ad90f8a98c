package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OAuthConfigTest {

  private static Map<ConfigKey, String> oauth() {
    Map<ConfigKey, String> v = new HashMap<>();
    v.put(ConfigKey.HTTP_PUBLIC_URL, "https://tidemark.example.com");
    v.put(ConfigKey.AUTH_OAUTH_ISSUER, "https://login.example.com/realms/agents");
    v.put(ConfigKey.AUTH_OAUTH_ROLES, "tidemark_reader, tidemark_writer");
    return v;
  }

  private static String refusal(Map<ConfigKey, String> v) {
    return assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(v)).getMessage();
  }

  @Test
  void oauthIsOffByDefaultAndOnWithAnIssuerAPublicUrlAndRoles() {
    assertFalse(TidemarkConfig.from(Map.of()).oauth().enabled());
    TidemarkConfig c = TidemarkConfig.from(oauth());
    assertTrue(c.oauth().enabled());
    assertEquals(List.of("tidemark_reader", "tidemark_writer"), c.oauth().roles());
    assertEquals("pg_role", c.oauth().roleClaim());
    assertEquals(30, c.oauth().leewaySeconds());
    assertEquals("https://tidemark.example.com/mcp", c.http().endpointUrl(null));
    assertEquals("https://tidemark.example.com/mcp/main", c.http().endpointUrl("main"));
  }

  @Test
  void anIssuerWithoutPublicUrlOrRolesOrWithPlainHttpElsewhereIsRefusedByName() {
    Map<ConfigKey, String> noUrl = oauth();
    noUrl.remove(ConfigKey.HTTP_PUBLIC_URL);
    assertTrue(refusal(noUrl).startsWith("config key http.public-url"));
    Map<ConfigKey, String> noRoles = oauth();
    noRoles.remove(ConfigKey.AUTH_OAUTH_ROLES);
    assertTrue(refusal(noRoles).startsWith("config key auth.oauth.roles"));
    Map<ConfigKey, String> http = oauth();
    http.put(ConfigKey.AUTH_OAUTH_ISSUER, "http://login.example.com");
    assertTrue(refusal(http).startsWith("config key auth.oauth.issuer"));
    Map<ConfigKey, String> local = oauth();
    local.put(ConfigKey.AUTH_OAUTH_ISSUER, "http://127.0.0.1:8081");
    assertTrue(TidemarkConfig.from(local).oauth().enabled());
    Map<ConfigKey, String> path = oauth();
    path.put(ConfigKey.HTTP_PUBLIC_URL, "https://tidemark.example.com/mcp");
    assertTrue(refusal(path).startsWith("config key http.public-url"));
    Map<ConfigKey, String> noAuth = oauth();
    noAuth.put(ConfigKey.AUTH_ENABLED, "false");
    noAuth.put(ConfigKey.HTTP_HOST, "127.0.0.1");
    assertTrue(refusal(noAuth).contains("auth.enabled"));
  }

  @Test
  void oauthKeysWithoutAnIssuerAreAContradiction() {
    assertTrue(refusal(Map.of(ConfigKey.AUTH_OAUTH_ROLES, "r")).contains("auth.oauth.issuer"));
  }

  @Test
  void roleToolsAreRoleColonToolsSeparatedByPipes() {
    TidemarkConfig c = TidemarkConfig.from(Map.of(ConfigKey.AUTH_ROLE_TOOLS, "reader:status|query, writer:*"));
    assertEquals(Map.of("reader", List.of("status", "query"), "writer", List.of("*")), c.roleTools());
    assertTrue(refusal(Map.of(ConfigKey.AUTH_ROLE_TOOLS, "status|query")).startsWith("config key auth.role-tools"));
    assertTrue(refusal(Map.of(ConfigKey.AUTH_ROLE_TOOLS, "r:status,r:query")).startsWith("config key auth.role-tools"));
  }
}
