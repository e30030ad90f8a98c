package dev.tidemark.auth;

import dev.tidemark.auth.impl.IssuerKeys;
import dev.tidemark.auth.impl.JwtAuthenticator;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

/** The OAuth 2.1 resource server: JWT access tokens of one configured issuer, beside Tidemark's own tokens. */
public final class OAuth {

  private OAuth() {}

  /**
   * An authenticator that verifies JWT access tokens of {@code config}'s issuer and hands every other
   * bearer token ({@code tmk_...}) to {@code tokens}. Its {@link Authenticator#start} fetches the
   * issuer's metadata and keys and fails, naming the issuer, when it cannot: a misconfigured issuer
   * stops the node at start, not at the first request.
   */
  /**
   * What {@code tidemark doctor} reports of the issuer: where its keys are and how many public signing
   * keys they hold, read exactly as a starting node reads them; fails with the same message a node's
   * start would.
   */
  public static Future<String> describeIssuer(Vertx vertx, OAuthConfig config) {
    IssuerKeys keys = new IssuerKeys(vertx, config);
    return keys.locate()
        .compose(url -> keys.fetch().map(verifier -> verifier.keys() + " public signing key(s) of " + config.issuer() + " at " + url))
        .eventually(() -> {
          keys.close();
          return Future.succeededFuture();
        });
  }

  /**
   * The issuer's metadata (RFC 8414, else OpenID Connect discovery), read as a starting node reads
   * it: the console takes its authorization and token endpoints from it.
   */
  public static Future<io.vertx.core.json.JsonObject> serverMetadata(Vertx vertx, OAuthConfig config) {
    IssuerKeys keys = new IssuerKeys(vertx, config);
    return keys.serverMetadata().eventually(() -> {
      keys.close();
      return Future.succeededFuture();
    });
  }

  public static Authenticator authenticator(Vertx vertx, OAuthConfig config, Authenticator tokens) {
    return new JwtAuthenticator(vertx, config, tokens);
  }
}
