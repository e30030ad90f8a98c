package dev.tidemark.auth;

import dev.tidemark.auth.impl.JwtAuthenticator;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
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
  public static Authenticator authenticator(Vertx vertx, OAuthConfig config, Authenticator tokens) {
    return new JwtAuthenticator(vertx, config, tokens);
  }
}
