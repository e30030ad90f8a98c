package dev.tidemark.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.database.schema.DatabaseSetup;
import dev.tidemark.devstack.FreePorts;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.LocalIssuer;
import dev.tidemark.testsupport.McpHttpClient;
import dev.tidemark.testsupport.NodeHarness;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import io.vertx.core.MultiMap;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The OAuth 2.1 resource server against a local authorization server (a Vert.x HTTP server serving
 * RFC 8414 metadata and a JWKS) with real RSA-signed access tokens, and the tool ceilings of
 * auth.role-tools: tidemark_reader may call only status, list_tables, describe_table and query.
 * That a node with settings that cannot work does not start is tested in module node (OAuthStartIT).
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OAuthIT {

  private static final List<String> READER_CEILING = List.of("status", "list_tables", "describe_table", "query");

  private LocalIssuer localIssuer;
  private String issuer;
  private String endpoint;
  private String publicUrl;
  private NodeHarness node;
  private final List<McpHttpClient> clients = new ArrayList<>();

  @BeforeAll
  void start(SharedInfra infra) throws Exception {
    int[] ports = FreePorts.allocate(2);
    localIssuer = LocalIssuer.start("k1");
    issuer = localIssuer.url();
    publicUrl = "http://127.0.0.1:" + ports[1];
    endpoint = publicUrl + "/mcp";
    node = GatewayFront.start(infra, ServiceHarness.DATABASE, "gateway,query", Map.of(
        ConfigKey.HTTP_PORT, String.valueOf(ports[1]),
        ConfigKey.HTTP_PUBLIC_URL, publicUrl,
        ConfigKey.AUTH_OAUTH_ISSUER, issuer,
        ConfigKey.AUTH_OAUTH_ROLES, DatabaseSetup.READER_ROLE + "," + DatabaseSetup.WRITER_ROLE,
        ConfigKey.AUTH_OAUTH_JWKS_REFRESH_SECONDS, "600",
        ConfigKey.AUTH_ROLE_TOOLS, DatabaseSetup.READER_ROLE + ":" + String.join("|", READER_CEILING) + "," + DatabaseSetup.WRITER_ROLE + ":*"));
  }

  @AfterAll
  void stop() {
    clients.forEach(McpHttpClient::close);
    ServiceHarness.closeAll(node);
    localIssuer.close();
  }

  // --- the authorization server's side: keys and tokens ---

  private void publish(String kid) {
    localIssuer.publish(kid);
  }

  private static String b64(byte[] b) {
    return LocalIssuer.b64(b);
  }

  private static String b64(JsonObject json) {
    return LocalIssuer.b64(json);
  }

  /** Claims of a valid token for the default endpoint, as the given role, with the given scopes. */
  private JsonObject claims(String role, String scope) {
    return localIssuer.claims("agent-7", endpoint, role, scope);
  }

  private String signed(String kid, JsonObject claims) {
    return localIssuer.token(kid, claims);
  }

  private McpHttpClient client(String token) {
    McpHttpClient c = new McpHttpClient(endpoint, token);
    clients.add(c);
    return c;
  }

  private McpHttpClient.Reply ping(String token) {
    McpHttpClient c = client(token);
    return c.post(c.request("ping", null));
  }

  private static void assertRefused(McpHttpClient.Reply reply, String messagePart) {
    assertEquals(401, reply.status(), reply.body());
    String challenge = reply.headers().get("WWW-Authenticate");
    assertTrue(challenge.contains("error=\"invalid_token\""), challenge);
    assertTrue(challenge.contains("resource_metadata=\""), challenge);
    String message = new JsonObject(reply.body()).getJsonObject("error").getString("message");
    assertTrue(message.contains(messagePart), message);
  }

  private static List<String> toolNames(McpHttpClient c) {
    return c.rpc("tools/list", new JsonObject()).getJsonObject("result").getJsonArray("tools").stream()
        .map(t -> ((JsonObject) t).getString("name")).toList();
  }

  // --- the tests ---

  @Test
  void eachEndpointHasItsOwnProtectedResourceMetadataNamingTheIssuerAndTheScopes() {
    McpHttpClient c = client(null);
    for (String path : List.of("/mcp", "/mcp/main")) {
      McpHttpClient.Reply reply = c.at(publicUrl + "/.well-known/oauth-protected-resource" + path).send("GET", null, MultiMap.caseInsensitiveMultiMap());
      assertEquals(200, reply.status(), reply.body());
      JsonObject doc = new JsonObject(reply.body());
      assertEquals(publicUrl + path, doc.getString("resource"));
      assertEquals(new JsonArray().add(issuer), doc.getJsonArray("authorization_servers"));
      assertEquals(new JsonArray().add("tidemark:read").add("tidemark:write"), doc.getJsonArray("scopes_supported"));
    }
    assertEquals(404, c.at(publicUrl + "/.well-known/oauth-protected-resource/mcp/other").send("GET", null, MultiMap.caseInsensitiveMultiMap()).status());
  }

  @Test
  void aRequestWithoutATokenIsChallengedWithTheMetadataAndTheScope() {
    McpHttpClient.Reply reply = ping(null);
    assertEquals(401, reply.status());
    assertEquals("Bearer realm=\"tidemark\", resource_metadata=\"" + publicUrl + "/.well-known/oauth-protected-resource/mcp\", "
        + "scope=\"tidemark:read\"", reply.headers().get("WWW-Authenticate"));
    McpHttpClient c = client(null).at(endpoint + "/main");
    assertTrue(c.post(c.request("ping", null)).headers().get("WWW-Authenticate")
        .contains("resource_metadata=\"" + publicUrl + "/.well-known/oauth-protected-resource/mcp/main\""));
  }

  @Test
  void aValidTokenCallsAsItsRoleUnderItsOwnName() throws Exception {
    McpHttpClient c = client(signed("k1", claims(DatabaseSetup.WRITER_ROLE, "tidemark:read tidemark:write")));
    c.initialize();
    JsonObject result = c.callTool("query", new JsonObject().put("sql", "SELECT current_user::text AS role, tidemark.caller() AS caller"));
    JsonObject row = result.getJsonObject("structuredContent").getJsonArray("rows").getJsonObject(0);
    assertEquals(DatabaseSetup.WRITER_ROLE, row.getString("role"), result.encode());
    assertEquals("oauth:agent-7", row.getString("caller"), result.encode());
    assertTrue(toolNames(c).contains("insert_rows"));
    // a Tidemark token keeps working beside OAuth
    McpHttpClient tmk = client(NodeHarness.READ_WRITE_TOKEN);
    tmk.initialize();
    assertTrue(toolNames(tmk).contains("insert_rows"));
  }

  @Test
  void aTokenForTheDatabaseEndpointIsRefusedOnTheDefaultOneAndAcceptedOnItsOwn() throws Exception {
    String token = signed("k1", claims(DatabaseSetup.WRITER_ROLE, "tidemark:read").put("aud", endpoint + "/main"));
    McpHttpClient own = client(token).at(endpoint + "/main");
    own.initialize();
    assertRefused(ping(token), "another resource");
  }

  @Test
  void expiredForeignMisaddressedAndForgedTokensAre401() throws Exception {
    long now = System.currentTimeMillis() / 1000;
    assertRefused(ping(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("exp", now - 120))), "expired");
    assertRefused(ping(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("nbf", now + 600))), "not valid yet");
    JsonObject noExpiry = claims(DatabaseSetup.READER_ROLE, "tidemark:read");
    noExpiry.remove("exp");
    assertRefused(ping(signed("k1", noExpiry)), "no expiry");
    assertRefused(ping(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("iss", "https://evil.example"))), "another authorization server");
    assertRefused(ping(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("aud", "https://other.example/mcp"))), "another resource");
    // alg none: no signature at all
    String unsigned = b64(new JsonObject().put("alg", "none").put("typ", "JWT")) + "." + b64(claims(DatabaseSetup.WRITER_ROLE, "tidemark:write")) + ".";
    assertRefused(ping(unsigned), "signature does not verify");
    // HS256 keyed with the issuer's public key, which anyone can read: the key confusion attack
    String input = b64(new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", "k1")) + "." + b64(claims(DatabaseSetup.WRITER_ROLE, "tidemark:write"));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(localIssuer.jwk("k1").encode().getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    assertRefused(ping(input + "." + b64(mac.doFinal(input.getBytes(StandardCharsets.US_ASCII)))), "no key of the issuer's");
    // a valid signature over other claims
    String good = signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read"));
    String[] parts = good.split("\\.");
    assertRefused(ping(parts[0] + "." + b64(claims(DatabaseSetup.WRITER_ROLE, "tidemark:write")) + "." + parts[2]), "signature does not verify");
    assertRefused(ping("not.a.jwt"), "malformed");
  }

  @Test
  void aTokenNamingARoleOutsideTheAllowedRolesIsRefused() throws Exception {
    assertRefused(ping(signed("k1", claims("it_nobody", "tidemark:read"))), "names no PostgreSQL role");
    assertRefused(ping(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("pg_role", new JsonArray()
        .add(DatabaseSetup.READER_ROLE).add(DatabaseSetup.WRITER_ROLE)))), "names no PostgreSQL role");
    // an array naming exactly one allowed role is that role
    client(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read").put("pg_role", new JsonArray()
        .add("offline_access").add(DatabaseSetup.READER_ROLE)))).initialize();
  }

  @Test
  void anUnknownKeyIdFetchesTheKeysOnDemandAtMostOncePerInterval() throws Exception {
    synchronized (this) {
      int before = localIssuer.jwksFetches();
      publish("k2"); // the issuer rotates: a new key the node has not seen
      client(signed("k2", claims(DatabaseSetup.READER_ROLE, "tidemark:read"))).initialize();
      assertEquals(before + 1, localIssuer.jwksFetches());
      publish("k3"); // within the interval: not fetched again, so refused
      assertRefused(ping(signed("k3", claims(DatabaseSetup.READER_ROLE, "tidemark:read"))), "no key of the issuer's");
      assertEquals(before + 1, localIssuer.jwksFetches());
      client(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read"))).initialize();
    }
  }

  @Test
  void aToolTheScopesDoNotCoverIs403InsufficientScopeAndAbsentFromTheList() throws Exception {
    McpHttpClient c = client(signed("k1", claims(DatabaseSetup.WRITER_ROLE, "tidemark:read")));
    c.initialize();
    List<String> names = toolNames(c);
    assertTrue(names.contains("query"));
    assertFalse(names.contains("insert_rows"));
    McpHttpClient.Reply reply = c.post(c.request("tools/call", new JsonObject().put("name", "insert_rows")
        .put("arguments", new JsonObject().put("table", "products").put("rows", new JsonArray()))));
    assertEquals(403, reply.status(), reply.body());
    String challenge = reply.headers().get("WWW-Authenticate");
    assertTrue(challenge.startsWith("Bearer error=\"insufficient_scope\", scope=\"tidemark:read tidemark:write\", resource_metadata=\""
        + publicUrl + "/.well-known/oauth-protected-resource/mcp\""), challenge);
    assertTrue(new JsonObject(reply.body()).getJsonObject("error").getString("message").contains("tidemark:write"));

    McpHttpClient none = client(signed("k1", claims(DatabaseSetup.WRITER_ROLE, "openid")));
    none.initialize();
    assertEquals(List.of(), toolNames(none));
    McpHttpClient.Reply read = none.post(none.request("resources/read", new JsonObject().put("uri", "tidemark://schema")));
    assertEquals(403, read.status(), read.body());
    assertTrue(read.headers().get("WWW-Authenticate").contains("scope=\"tidemark:read\""));
  }

  @Test
  void aToolOutsideTheRolesCeilingIsUnknownWhateverTheTokenOrScopes() throws Exception {
    McpHttpClient oauth = client(signed("k1", claims(DatabaseSetup.READER_ROLE, "tidemark:read tidemark:write")));
    oauth.initialize();
    McpHttpClient tmk = client(NodeHarness.READ_ONLY_TOKEN);
    tmk.initialize();
    for (McpHttpClient c : List.of(oauth, tmk)) {
      assertEquals(READER_CEILING, toolNames(c));
      JsonObject unknown = c.rpc("tools/call", new JsonObject().put("name", "no_such_tool").put("arguments", new JsonObject()));
      for (String outside : List.of("get_row", "insert_rows")) {
        JsonObject refused = c.rpc("tools/call", new JsonObject().put("name", outside).put("arguments", new JsonObject()));
        assertEquals(unknown.getJsonObject("error"), refused.getJsonObject("error"), outside);
      }
      // a resource served by a tool outside the ceiling is not there either
      JsonObject row = c.rpc("resources/read", new JsonObject().put("uri", "tidemark://row/products/1"));
      assertEquals(-32002, row.getJsonObject("error").getInteger("code"), row.encode());
    }
  }
}
