package dev.tidemark.auth.impl;

import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.impl.jose.JWK;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The issuer's signing keys: where they are (the issuer's metadata, unless configured), fetched
 * without blocking, and the verifier built over them. A verifier is only ever built over at least
 * one public key: vertx-auth-jwt accepts unsigned tokens when it holds no key at all.
 */
public final class IssuerKeys {

  private static final Logger LOG = LoggerFactory.getLogger(IssuerKeys.class);
  /** Longest a fetch of the metadata or the keys may take. */
  static final long FETCH_TIMEOUT_MS = 10_000;
  /** Key types whose keys are public: a symmetric ("oct") key in a published key set would let anyone sign. */
  private static final Set<String> PUBLIC_KEY_TYPES = Set.of("RSA", "EC", "OKP");

  private final OAuthConfig config;
  private final WebClient client;
  private final Vertx vertx;
  private String jwksUrl;

  public IssuerKeys(Vertx vertx, OAuthConfig config) {
    this.vertx = vertx;
    this.config = config;
    this.client = WebClient.create(vertx, new WebClientOptions().setFollowRedirects(false).setConnectTimeout((int) FETCH_TIMEOUT_MS));
  }

  public void close() {
    client.close();
  }

  /** The key set's URL: configured, or read from the issuer's metadata, whose issuer must be the one configured. */
  public Future<String> locate() {
    if (!config.jwksUrl().isEmpty()) {
      jwksUrl = config.jwksUrl();
      return Future.succeededFuture(jwksUrl);
    }
    return serverMetadata().map(meta -> jwksUrl = meta.getString("jwks_uri"));
  }

  /**
   * The issuer's metadata document, from RFC 8414's well-known URL or else OpenID Connect's, which
   * must name the configured issuer and an https key set: where its keys are, and, for a client
   * such as the console, its authorization and token endpoints.
   */
  public Future<JsonObject> serverMetadata() {
    List<String> tried = new ArrayList<>();
    return metadata(metadataUrls().get(0), tried)
        .recover(err -> metadata(metadataUrls().get(1), tried))
        .recover(err -> Future.failedFuture(new IllegalStateException("cannot read the issuer's metadata (" + String.join("; ", tried)
            + "); check auth.oauth.issuer, or set auth.oauth.jwks-url")));
  }

  /** RFC 8414's well-known URL (inserted before the issuer's path), then OpenID Connect's (appended to it). */
  List<String> metadataUrls() {
    URI issuer = URI.create(config.issuer());
    String path = issuer.getRawPath() == null ? "" : issuer.getRawPath().replaceAll("/+$", "");
    String origin = issuer.getScheme() + "://" + issuer.getRawAuthority();
    return List.of(origin + "/.well-known/oauth-authorization-server" + path, origin + path + "/.well-known/openid-configuration");
  }

  private Future<JsonObject> metadata(String url, List<String> tried) {
    return getJson(url).compose(meta -> {
      if (!config.issuer().equals(meta.getString("issuer"))) {
        // RFC 8414 section 3.3: metadata naming another issuer must not be used
        tried.add(url + ": names issuer " + meta.getValue("issuer"));
        return Future.failedFuture("foreign issuer");
      }
      Object jwks = meta.getValue("jwks_uri");
      if (!(jwks instanceof String s) || !(s.startsWith("https://") || s.startsWith("http://") && loopback(s))) {
        tried.add(url + ": no https jwks_uri");
        return Future.failedFuture("no jwks_uri");
      }
      return Future.succeededFuture(meta);
    }, err -> {
      tried.add(url + ": " + err.getMessage());
      return Future.failedFuture(err);
    });
  }

  private static boolean loopback(String url) {
    return dev.tidemark.config.TidemarkConfig.isLoopback(URI.create(url).getHost());
  }

  /** Fetches the key set and builds a verifier over its public signing keys; fails when it holds none. */
  public Future<Verifier> fetch() {
    return getJson(jwksUrl).compose(set -> {
      Object keys = set.getValue("keys");
      List<JsonObject> usable = new ArrayList<>();
      List<String> kids = new ArrayList<>();
      Set<String> ids = new java.util.HashSet<>();
      if (keys instanceof JsonArray array) {
        for (Object k : array) {
          if (k instanceof JsonObject key && usable(key)) {
            usable.add(key);
            kids.add(key.getString("kid", "(no kid)") + " " + new JWK(key).getAlgorithm());
            if (key.getString("kid") != null) {
              ids.add(key.getString("kid"));
            }
          }
        }
      }
      if (usable.isEmpty()) {
        return Future.failedFuture(new IllegalStateException("the key set at " + jwksUrl + " holds no public signing key"));
      }
      LOG.info("OAuth issuer {}: {} signing keys from {}: {}", config.issuer(), usable.size(), jwksUrl, kids);
      JWTAuth auth = JWTAuth.create(vertx, new JWTAuthOptions().setJwks(usable)
          // time claims are checked by JwtAuthenticator, which can say which one failed
          .setJWTOptions(new JWTOptions().setIgnoreExpiration(true)));
      return Future.succeededFuture(new Verifier(auth, usable.size(), Set.copyOf(ids)));
    });
  }

  /** A public key meant for signatures, of an algorithm the verifier knows (its own "alg", or its type's default). */
  private static boolean usable(JsonObject key) {
    if (!PUBLIC_KEY_TYPES.contains(key.getString("kty")) || key.containsKey("d")) {
      return false; // a private or symmetric key has no place in a published key set
    }
    String use = key.getString("use");
    if (use != null && !use.equals("sig")) {
      return false;
    }
    try {
      new JWK(key);
      return true;
    } catch (RuntimeException e) {
      LOG.warn("OAuth key {} is skipped: {}", key.getString("kid"), e.getMessage());
      return false;
    }
  }

  private Future<JsonObject> getJson(String url) {
    return client.getAbs(url).timeout(FETCH_TIMEOUT_MS).putHeader("Accept", "application/json").send()
        .compose((HttpResponse<io.vertx.core.buffer.Buffer> response) -> {
          if (response.statusCode() != 200) {
            return Future.failedFuture(new IllegalStateException("HTTP " + response.statusCode()));
          }
          try {
            JsonObject body = response.bodyAsJsonObject();
            return body == null ? Future.failedFuture(new IllegalStateException("an empty body")) : Future.succeededFuture(body);
          } catch (RuntimeException e) {
            return Future.failedFuture(new IllegalStateException("not a JSON object"));
          }
        });
  }

  /** A verifier over one fetch of the keys. */
  public record Verifier(JWTAuth auth, int keys, Set<String> kids) {}
}
