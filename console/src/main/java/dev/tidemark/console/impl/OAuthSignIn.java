package dev.tidemark.console.impl;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.OAuth;
import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Sign-in through the cluster's OAuth issuer: the authorization code flow with PKCE (RFC 7636, S256)
 * for the console as a public client, asking for an access token for the MCP endpoint (RFC 8707's
 * resource), which is then checked by the endpoint's own authenticator: the person maps to a
 * PostgreSQL role exactly as an agent with that token would. The state and the code verifier wait
 * in a sealed, short-lived cookie, so the callback may reach any node.
 *
 * <p>vertx-auth-oauth2 was not taken: its flow keeps the verifier in a server-side web session, and
 * it would verify the access token a second way beside the endpoint's own; what is left here is one
 * redirect and one form POST.
 */
final class OAuthSignIn {

  static final String COOKIE = "tidemark_console_oauth";
  /** How long the issuer's sign-in may take. */
  static final long PENDING_MS = 10 * 60 * 1000L;

  private final Vertx vertx;
  private final TidemarkConfig config;
  private final OAuthConfig oauth;
  private final Authenticator authenticator;
  private final Sealer sealer;
  private final SignIns signIns;
  private final String path;
  private final WebClient client;
  private Future<JsonObject> metadata;

  OAuthSignIn(Vertx vertx, TidemarkConfig config, Authenticator authenticator, Sealer sealer, SignIns signIns) {
    this.vertx = vertx;
    this.config = config;
    this.oauth = config.oauth();
    this.authenticator = authenticator;
    this.sealer = sealer;
    this.signIns = signIns;
    this.path = config.console().path();
    this.client = WebClient.create(vertx, new WebClientOptions().setFollowRedirects(false).setConnectTimeout(10_000));
  }

  /** The endpoint the person's access token is for, and so its audience unless auth.oauth.audience says otherwise. */
  private String resource() {
    return config.http().endpointUrl(null);
  }

  private String redirectUri() {
    return config.http().publicUrl() + path + "/oauth/callback";
  }

  /** The issuer's endpoints, read once (again after a failure). */
  private synchronized Future<JsonObject> metadata() {
    if (metadata == null || metadata.failed()) {
      metadata = OAuth.serverMetadata(vertx, oauth);
    }
    return metadata;
  }

  /** Sends the browser to the issuer's authorization endpoint with a fresh state and PKCE challenge. */
  Future<Void> start(RoutingContext ctx) {
    return metadata().compose(meta -> {
      String authorize = meta.getString("authorization_endpoint");
      if (authorize == null || meta.getString("token_endpoint") == null) {
        return Future.failedFuture(new IllegalStateException("the issuer's metadata names no authorization_endpoint or token_endpoint"));
      }
      String state = SignIns.randomId(24);
      String verifier = SignIns.randomId(48);
      ctx.response().addCookie(signIns.cookie(COOKIE, sealer.seal("oauth", "console", new JsonObject().put("state", state)
              .put("verifier", verifier).put("e", System.currentTimeMillis() + PENDING_MS)), path + "/oauth", CookieSameSite.LAX)
          .setMaxAge(PENDING_MS / 1000));
      String url = authorize + (authorize.contains("?") ? "&" : "?") + "response_type=code"
          + "&client_id=" + enc(config.console().oauthClientId())
          + "&redirect_uri=" + enc(redirectUri())
          + "&scope=" + enc(OAuthConfig.READ_SCOPE + " " + OAuthConfig.WRITE_SCOPE)
          + "&state=" + enc(state)
          + "&code_challenge=" + enc(challenge(verifier)) + "&code_challenge_method=S256"
          + "&resource=" + enc(resource());
      ctx.response().setStatusCode(303).putHeader("Location", url).end();
      return Future.succeededFuture();
    });
  }

  /** The issuer sent the browser back: the code is exchanged with the verifier, the token checked, the person signed in. */
  Future<Caller> callback(RoutingContext ctx) {
    io.vertx.core.http.Cookie pending = ctx.request().getCookie(COOKIE);
    JsonObject started = pending == null ? null : sealer.open("oauth", "console", pending.getValue()).orElse(null);
    String state = ctx.request().getParam("state");
    if (started == null || started.getLong("e", 0L) < System.currentTimeMillis()) {
      return Future.failedFuture(Refusal.signIn("This sign-in was not started here, or took longer than ten minutes. Start again."));
    }
    if (state == null || !state.equals(started.getString("state"))) {
      return Future.failedFuture(Refusal.signIn("The issuer's answer does not belong to the sign-in this browser started (its state"
          + " differs). Start again."));
    }
    if (ctx.request().getParam("error") != null) {
      return Future.failedFuture(Refusal.signIn("The issuer did not sign you in: " + ctx.request().getParam("error")
          + ". Start again, or ask the issuer's administrator."));
    }
    String code = ctx.request().getParam("code");
    if (code == null || code.isEmpty()) {
      return Future.failedFuture(Refusal.signIn("The issuer's answer holds no authorization code. Start again."));
    }
    ctx.response().addCookie(signIns.cookie(COOKIE, "", path + "/oauth", CookieSameSite.LAX).setMaxAge(0));
    MultiMap form = MultiMap.caseInsensitiveMultiMap().add("grant_type", "authorization_code").add("code", code)
        .add("redirect_uri", redirectUri()).add("client_id", config.console().oauthClientId())
        .add("code_verifier", started.getString("verifier")).add("resource", resource());
    return metadata().compose(meta -> client.postAbs(meta.getString("token_endpoint")).timeout(10_000)
            .putHeader("Accept", "application/json").sendForm(form))
        .compose(response -> {
          JsonObject body;
          try {
            body = response.bodyAsJsonObject();
          } catch (RuntimeException e) {
            body = null;
          }
          if (response.statusCode() != 200 || body == null || !(body.getValue("access_token") instanceof String)) {
            return Future.failedFuture(Refusal.signIn("The issuer did not give the console an access token (HTTP "
                + response.statusCode() + (body != null && body.getString("error") != null ? ", " + body.getString("error") : "")
                + "). Start again."));
          }
          String token = body.getString("access_token");
          return authenticator.authenticate("Bearer " + token, resource())
              .recover(err -> Future.failedFuture(Refusal.signIn("The issuer's access token does not map you to a role this"
                  + " server serves: " + err.getMessage())))
              .compose(caller -> {
                signIns.start(ctx, caller, Person.OAUTH, null, expiry(token));
                return Future.succeededFuture(caller);
              });
        });
  }

  /** When the access token expires (its exp claim, already checked by the authenticator). */
  static long expiry(String jwt) {
    try {
      String payload = jwt.split("\\.")[1];
      JsonObject claims = new JsonObject(new String(Base64.getUrlDecoder().decode(payload), StandardCharsets.UTF_8));
      return claims.getLong("exp") * 1000;
    } catch (RuntimeException e) {
      return System.currentTimeMillis();
    }
  }

  /** RFC 7636's S256: the verifier's SHA-256, base64url without padding. */
  static String challenge(String verifier) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(verifier.getBytes(StandardCharsets.US_ASCII));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  void close() {
    client.close();
  }
}
