package dev.tidemark.gateway.impl.http;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What the endpoint tells a client about OAuth (MCP authorization, RFC 9728 and RFC 6750): the
 * protected-resource metadata of each endpoint, and the {@code WWW-Authenticate} challenges that
 * point to it. Without an issuer the challenges are Tidemark's plain bearer challenge.
 */
public final class Challenges {

  /** The well-known prefix RFC 9728 inserts before an endpoint's path. */
  public static final String METADATA_PREFIX = "/.well-known/oauth-protected-resource";

  private final TidemarkConfig.HttpConfig http;
  private final OAuthConfig oauth;

  public Challenges(TidemarkConfig config) {
    this.http = config.http();
    this.oauth = config.oauth();
  }

  public boolean oauth() {
    return oauth.enabled();
  }

  /** The resource of the endpoint for {@code databaseInPath} (null: the default endpoint), or null without a public URL. */
  public String resource(String databaseInPath) {
    return http.endpointUrl(databaseInPath);
  }

  /** The metadata document's URL for that endpoint. */
  public String metadataUrl(String databaseInPath) {
    return http.publicUrl() + METADATA_PREFIX + http.path() + (databaseInPath == null ? "" : "/" + databaseInPath);
  }

  /** RFC 9728's document for one endpoint: its own resource, the issuer, and the scopes the tools need. */
  public JsonObject metadata(String databaseInPath) {
    return new JsonObject()
        .put("resource", resource(databaseInPath))
        .put("authorization_servers", new JsonArray().add(oauth.issuer()))
        .put("scopes_supported", new JsonArray().add(OAuthConfig.READ_SCOPE).add(OAuthConfig.WRITE_SCOPE))
        .put("bearer_methods_supported", new JsonArray().add("header"))
        .put("resource_name", "Tidemark");
  }

  /**
   * The challenge of a 401. With OAuth it names the metadata and the scope to ask for first (reading;
   * writing is asked for by the step-up of a 403), and says invalid_token only when a token was sent,
   * as RFC 6750 section 3.1 asks.
   */
  public String unauthorized(boolean tokenSent, String databaseInPath) {
    if (!oauth.enabled()) {
      return McpHeaders.INVALID_TOKEN_CHALLENGE;
    }
    return "Bearer realm=\"tidemark\"" + (tokenSent ? ", error=\"invalid_token\"" : "")
        + ", resource_metadata=\"" + metadataUrl(databaseInPath) + "\", scope=\"" + OAuthConfig.READ_SCOPE + "\"";
  }

  /** The challenge of a 403 for a scope the token lacks: the MCP step-up, so the client can ask for it. */
  public String insufficientScope(String scope, String databaseInPath, String description) {
    return "Bearer error=\"insufficient_scope\", scope=\"" + scope + "\", resource_metadata=\"" + metadataUrl(databaseInPath)
        + "\", error_description=\"" + description + "\"";
  }
}
