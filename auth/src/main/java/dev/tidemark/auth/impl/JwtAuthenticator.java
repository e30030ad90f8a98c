package dev.tidemark.auth.impl;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.Revocation;
import dev.tidemark.auth.Tokens;
import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.NoSuchKeyIdException;
import io.vertx.ext.auth.User;
import io.vertx.ext.auth.authentication.TokenCredentials;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JWT access tokens of the configured issuer (MCP authorization, OAuth 2.1 section 5.2): the
 * signature over one of the issuer's keys, with the algorithm that key names, then the issuer, the
 * audience (RFC 8707: the endpoint's public URL), the time claims, the role and the scopes. Every
 * other bearer token goes to Tidemark's own tokens. A refusal tells the client what to do and the
 * log why, never the token.
 */
public final class JwtAuthenticator implements Authenticator {

  private static final Logger LOG = LoggerFactory.getLogger(JwtAuthenticator.class);
  /** What a refused access token is told; the log has the reason. */
  static final String REFUSED = "The access token is not valid for this endpoint";

  private final Vertx vertx;
  private final OAuthConfig config;
  private final Authenticator tokens;
  private final IssuerKeys keys;
  private volatile IssuerKeys.Verifier verifier;
  /** When keys were last fetched for an unknown key id; such fetches are at most one per interval. */
  private long lastOnDemandNanos;
  private boolean fetchedOnDemand;
  private Future<IssuerKeys.Verifier> fetching;
  private long periodic = -1;

  public JwtAuthenticator(Vertx vertx, OAuthConfig config, Authenticator tokens) {
    this.vertx = vertx;
    this.config = config;
    this.tokens = tokens;
    this.keys = new IssuerKeys(vertx, config);
  }

  @Override
  public Future<Void> start(Handler<Revocation> revoked) {
    return keys.locate().compose(url -> keys.fetch())
        .recover(err -> Future.failedFuture(new IllegalStateException("auth.oauth.issuer " + config.issuer() + ": " + err.getMessage())))
        .compose(v -> {
          verifier = v;
          periodic = vertx.setPeriodic(TimeUnit.SECONDS.toMillis(config.jwksMaxAgeSeconds()), t -> refetch("scheduled"));
          return tokens.start(revoked);
        });
  }

  @Override
  public Future<Void> stop() {
    vertx.cancelTimer(periodic);
    keys.close();
    return tokens.stop();
  }

  @Override
  public Future<Caller> authenticate(String authorization) {
    return authenticate(authorization, null);
  }

  @Override
  public Future<Caller> authenticate(String authorization, String resource) {
    String token = authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7) ? authorization.substring(7).trim() : null;
    if (token == null || token.startsWith(Tokens.PREFIX) || token.chars().filter(c -> c == '.').count() != 2) {
      return tokens.authenticate(authorization, resource); // not a JWT: one of Tidemark's own, or nothing valid
    }
    return verify(token, true).compose(claims -> {
      try {
        return Future.succeededFuture(caller(claims, resource, System.currentTimeMillis() / 1000));
      } catch (Refused r) {
        return refuse(r.getMessage(), r.reason, claims);
      }
    });
  }

  /** The token's claims once its signature verified; an unknown key id fetches the keys once, within the interval. */
  private Future<JsonObject> verify(String token, boolean mayFetch) {
    IssuerKeys.Verifier current = verifier;
    return current.auth().authenticate(new TokenCredentials(token))
        .map(User::attributes).map(a -> a.getJsonObject("accessToken"))
        .recover(err -> {
          if (err instanceof NoSuchKeyIdException missing) {
            // vertx-auth-jwt says "alg#kid"; a key id it knows with another algorithm is a forgery, not a rotation
            String kid = missing.id().substring(missing.id().indexOf('#') + 1);
            // a fetch that ended while this token was checked against the keys before it: check again with the new keys
            IssuerKeys.Verifier latest = verifier;
            if (latest != current && latest.kids().contains(kid)) {
              return verify(token, false);
            }
            boolean rotated = mayFetch && !kid.equals("<null>") && !current.kids().contains(kid);
            Future<IssuerKeys.Verifier> fetched = rotated ? onDemand(kid) : null;
            return fetched == null
                ? refuse(REFUSED + ": no key of the issuer's verifies it; get a new token from the authorization server.",
                    "no key of the issuer's matches algorithm#kid " + missing.id() + (!mayFetch ? " (after fetching the keys again)"
                        : rotated ? " (keys fetched for an unknown kid less than " + config.jwksRefreshSeconds() + " s ago)"
                        : " (the key of that kid has another algorithm, or the token names no kid)"), null)
                : fetched.compose(v -> verify(token, false));
          }
          return refuse(REFUSED + ": it is malformed or its signature does not verify; get a new token from the authorization server.",
              "not a verifiable JWT: " + brief(err), null);
        });
  }

  /**
   * A fetch for an unknown key id, shared by every request waiting for it; null when one was made within the interval.
   * The keys held are asked first: a fetch may have ended between the caller's look at them and this call
   * (the keys are set before the fetch is let go), and then the key is known and nothing need be fetched.
   */
  private synchronized Future<IssuerKeys.Verifier> onDemand(String kid) {
    IssuerKeys.Verifier held = verifier;
    if (held.kids().contains(kid)) {
      return Future.succeededFuture(held);
    }
    if (fetching != null) {
      return fetching;
    }
    long now = System.nanoTime();
    if (fetchedOnDemand && now - lastOnDemandNanos < TimeUnit.SECONDS.toNanos(config.jwksRefreshSeconds())) {
      return null;
    }
    fetchedOnDemand = true;
    lastOnDemandNanos = now;
    return refetch("an unknown key id");
  }

  private synchronized Future<IssuerKeys.Verifier> refetch(String why) {
    if (fetching != null) {
      return fetching;
    }
    Future<IssuerKeys.Verifier> f = keys.fetch()
        .onSuccess(v -> verifier = v)
        // the keys held keep verifying; the token waiting for this fetch cannot be checked right now (503)
        .recover(err -> {
          LOG.warn("OAuth issuer {}: fetching the keys for {} failed, keeping the {} held: {}", config.issuer(), why, verifier.keys(),
              err.getMessage());
          return Future.failedFuture(new IllegalStateException("the issuer's keys could not be fetched"));
        })
        .eventually(() -> {
          synchronized (this) {
            fetching = null;
          }
          return Future.succeededFuture();
        });
    fetching = f;
    return f;
  }

  /** A library's reason, without any excerpt of the input it may quote (a token's parts are not for the log). */
  static String brief(Throwable err) {
    String m = String.valueOf(err.getMessage());
    int cut = m.indexOf(" at [");
    m = (cut < 0 ? m : m.substring(0, cut)).lines().findFirst().orElse("");
    return err.getClass().getSimpleName() + ": " + (m.length() > 120 ? m.substring(0, 120) : m);
  }

  private static <T> Future<T> refuse(String message, String reason, JsonObject claims) {
    LOG.info("OAuth access token refused: {}{}", reason,
        claims == null ? "" : " (sub " + claims.getValue("sub") + ", iss " + claims.getValue("iss") + ")");
    return Future.failedFuture(new AuthenticationException(message));
  }

  /** An access token's claims refused, with the reason for the log. */
  static final class Refused extends RuntimeException {
    final String reason;

    Refused(String message, String reason) {
      super(message, null, false, false);
      this.reason = reason;
    }
  }

  /** The caller a verified token's claims name, or {@link Refused} with what is wrong with them. */
  Caller caller(JsonObject claims, String resource, long now) {
    String renew = "; get a new token from the authorization server.";
    if (!config.issuer().equals(claims.getValue("iss"))) {
      throw new Refused(REFUSED + ": it was issued by another authorization server" + renew,
          "iss is " + claims.getValue("iss") + ", not " + config.issuer());
    }
    String audience = config.audience().isEmpty() ? resource : config.audience();
    List<Object> audiences = claims.getValue("aud") instanceof JsonArray a ? a.getList() : Arrays.asList(claims.getValue("aud"));
    if (audience == null || !audiences.contains(audience)) {
      throw new Refused(REFUSED + ": it was issued for another resource; get one for resource " + audience + " from the authorization server.",
          "aud is " + claims.getValue("aud") + ", not " + audience);
    }
    long leeway = config.leewaySeconds();
    if (!(claims.getValue("exp") instanceof Number exp)) {
      throw new Refused(REFUSED + ": it has no expiry" + renew, "no exp claim");
    }
    if (exp.longValue() + leeway <= now) {
      throw new Refused(REFUSED + ": it has expired" + renew, "expired at " + exp.longValue() + ", now " + now + " (leeway " + leeway + " s)");
    }
    if (claims.getValue("nbf") instanceof Number nbf && nbf.longValue() - leeway > now) {
      throw new Refused(REFUSED + ": it is not valid yet; check this node's clock.", "nbf is " + nbf.longValue() + ", now " + now);
    }
    if (claims.getValue("iat") instanceof Number iat && iat.longValue() - leeway > now) {
      throw new Refused(REFUSED + ": it was issued in the future; check this node's clock.", "iat is " + iat.longValue() + ", now " + now);
    }
    if (!(claims.getValue("sub") instanceof String sub) || sub.isEmpty()) {
      throw new Refused(REFUSED + ": it names no subject" + renew, "no sub claim");
    }
    String role = role(claims.getValue(config.roleClaim()));
    List<String> scopes = scopes(claims);
    // "oauth:" never begins a Tidemark token's name, so row-level-security policies can tell the two apart
    String name = "oauth:" + sub;
    return new Caller(name, name, role, scopes.contains(OAuthConfig.WRITE_SCOPE) ? Access.READ_WRITE : Access.READ_ONLY,
        List.of("*"), scopes, bindable(claims));
  }

  /** Claims a named tool may bind a parameter from: short text, numbers and booleans, never the token's own bookkeeping. */
  static JsonObject bindable(JsonObject claims) {
    JsonObject out = new JsonObject();
    for (String name : claims.fieldNames()) {
      Object v = claims.getValue(name);
      boolean plain = v instanceof Number || v instanceof Boolean || v instanceof String s && s.length() <= 1024;
      if (plain && out.size() < 64 && !List.of("iss", "aud", "exp", "nbf", "iat", "jti", "scope", "scp").contains(name)) {
        out.put(name, v);
      }
    }
    return out;
  }

  /** The role claim: a string, or an array of which exactly one entry is an allowed role. */
  private String role(Object claim) {
    String noRole = REFUSED + ": it names no PostgreSQL role this server serves; ask the operator to grant one.";
    if (claim instanceof String s) {
      if (!config.roles().contains(s)) {
        throw new Refused(noRole, config.roleClaim() + " is " + s + ", which auth.oauth.roles " + config.roles() + " does not list");
      }
      return s;
    }
    if (claim instanceof JsonArray a) {
      List<String> allowed = a.stream().filter(r -> r instanceof String && config.roles().contains(r)).map(String.class::cast).distinct().toList();
      if (allowed.size() != 1) {
        throw new Refused(noRole, config.roleClaim() + " is " + a.encode() + ", which names " + allowed.size()
            + " of auth.oauth.roles " + config.roles() + " (exactly one is needed)");
      }
      return allowed.get(0);
    }
    throw new Refused(noRole, "no " + config.roleClaim() + " claim (auth.oauth.role-claim)");
  }

  /** RFC 9068's space-separated "scope", or Entra's "scp" (a string, or an array). */
  static List<String> scopes(JsonObject claims) {
    List<String> out = new ArrayList<>();
    for (String claim : List.of("scope", "scp")) {
      Object value = claims.getValue(claim);
      if (value instanceof String s) {
        Arrays.stream(s.split(" ")).filter(x -> !x.isEmpty()).forEach(out::add);
      } else if (value instanceof JsonArray a) {
        a.stream().filter(String.class::isInstance).map(String.class::cast).forEach(out::add);
      }
    }
    return out.stream().distinct().toList();
  }
}
