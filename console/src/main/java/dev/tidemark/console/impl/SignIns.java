package dev.tidemark.console.impl;

import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.ext.web.RoutingContext;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Console sign-ins, held by the browser in one sealed cookie (no node keeps a session, so any
 * gateway serves any page): who the person is, how they signed in, until when, and the id their
 * forms are bound to. The cookie is HttpOnly, SameSite=Strict, and Secure behind TLS. A sign-in ends
 * when it expires, when the person signs out (its id is kept in a cluster map until it would have
 * expired, so every node refuses it), or, for a token sign-in, when that token is revoked or expires.
 */
final class SignIns {

  static final String COOKIE = "tidemark_console";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Vertx vertx;
  private final Sealer sealer;
  private final Pool tokens;
  private final String path;
  private final boolean publicTls;
  private final long sessionMillis;

  /**
   * @param tokens Tidemark's login to the default database, where tokens are kept
   * @param publicTls whether people reach the console over TLS (http.public-url is https), so that cookies are Secure
   */
  SignIns(Vertx vertx, Sealer sealer, Pool tokens, String path, boolean publicTls, long sessionSeconds) {
    this.vertx = vertx;
    this.sealer = sealer;
    this.tokens = tokens;
    this.path = path;
    this.publicTls = publicTls;
    this.sessionMillis = sessionSeconds * 1000;
  }

  static String randomId(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** Whether the request carries a sign-in cookie at all (a page without one sends the person to sign in). */
  static boolean hasCookie(RoutingContext ctx) {
    return ctx.request().getCookie(COOKIE) != null;
  }

  /** The person signed in, or a {@link Refusal} with code SIGN_IN_REQUIRED that says why not. */
  Future<Person> current(RoutingContext ctx) {
    Cookie cookie = ctx.request().getCookie(COOKIE);
    if (cookie == null) {
      return Future.failedFuture(Refusal.signIn("You are not signed in to the console (or your browser did not send the sign-in"
          + " cookie). Sign in, then open the page again."));
    }
    Person person;
    try {
      person = sealer.open("session", "console", cookie.getValue()).map(Person::fromJson).orElse(null);
    } catch (RuntimeException e) {
      person = null;
    }
    if (person == null) {
      return Future.failedFuture(Refusal.signIn("Your sign-in cookie was not made by this console (or its keys were retired since)."
          + " Sign in again."));
    }
    if (person.expiresAtMs() <= System.currentTimeMillis()) {
      return Future.failedFuture(Refusal.signIn("Your sign-in expired at " + java.time.Instant.ofEpochMilli(person.expiresAtMs())
          + ". Sign in again; nothing was done."));
    }
    Person p = person;
    return signedOut().compose(m -> m.get(p.sid())).compose(ended -> {
      if (ended != null) {
        return Future.failedFuture(Refusal.signIn("You signed out of this sign-in. Sign in again; nothing was done."));
      }
      return p.tokenId() == null ? Future.succeededFuture(p) : standing(p);
    });
  }

  /**
   * A token sign-in lasts only as long as its token: revoked, expired or replaced by a token of the
   * same name (which keeps the id), the sign-in ends with it.
   */
  private Future<Person> standing(Person p) {
    return tokens.preparedQuery("SELECT 1 FROM tidemark.api_token WHERE id::text = $1 AND revoked_at IS NULL"
            + " AND (expires_at IS NULL OR expires_at > now())"
            // read as the token's lookup reads it (Caller.validSince): a later value is a later token
            + " AND coalesce((extract(epoch FROM invalidated_at) * 1000)::int8, 0) <= $2")
        .execute(Tuple.of(p.tokenId(), p.caller().validSince()))
        .compose(rows -> rows.size() == 1 ? Future.succeededFuture(p) : Future.failedFuture(Refusal.signIn(
            "The token you signed in with (" + p.name() + ") was revoked, has expired or was replaced, which ends its sign-in."
                + " Sign in again with a valid administrator token; nothing was done.")));
  }

  /**
   * When the token {@code tokenId} expires, in epoch milliseconds, or {@link Long#MAX_VALUE} for a
   * token that does not: a token's sign-in ends with the token, as an OAuth one ends with its access token.
   */
  Future<Long> tokenExpiry(String tokenId) {
    return tokens.preparedQuery("SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM tidemark.api_token WHERE id::text = $1")
        .execute(Tuple.of(tokenId))
        .map(rows -> rows.size() == 1 && rows.iterator().next().getLong(0) != null ? rows.iterator().next().getLong(0) : Long.MAX_VALUE);
  }

  /** Starts a sign-in for {@code caller}, lasting console.session-seconds or until {@code notAfterMs}, whichever is sooner. */
  void start(RoutingContext ctx, Caller caller, String via, String tokenId, long notAfterMs) {
    long expires = Math.min(System.currentTimeMillis() + sessionMillis, notAfterMs);
    Person person = new Person(caller, randomId(18), via, tokenId, expires);
    // a cookie of the browser session (no Max-Age): the sealed expiry decides, so an expired sign-in is told as such
    ctx.response().addCookie(cookie(COOKIE, sealer.seal("session", "console", person.toJson()), path, CookieSameSite.STRICT));
  }

  /** Ends {@code person}'s sign-in on every node: its id is kept as signed out until it would have expired. */
  Future<Void> signOut(RoutingContext ctx, Person person) {
    long left = Math.max(1000, person.expiresAtMs() - System.currentTimeMillis());
    ctx.response().addCookie(cookie(COOKIE, "", path, CookieSameSite.STRICT).setMaxAge(0));
    return signedOut().compose(m -> m.put(person.sid(), true, left));
  }

  /** A cookie as the console sets every one: HttpOnly, Secure behind TLS, on the console's path. */
  Cookie cookie(String name, String value, String cookiePath, CookieSameSite sameSite) {
    return Cookie.cookie(name, value).setPath(cookiePath).setHttpOnly(true).setSecure(publicTls).setSameSite(sameSite);
  }

  private Future<AsyncMap<String, Boolean>> signedOut() {
    return vertx.sharedData().getAsyncMap(Addresses.CONSOLE_SIGNED_OUT_MAP);
  }

  /** Token sign-in: only an administrator's token (console.administrators), checked as the endpoint checks a bearer token. */
  static Future<Caller> byToken(Authenticator authenticator, String token) {
    if (token == null || token.isBlank() || token.length() > 4096) {
      return Future.failedFuture(Refusal.signIn("Paste an administrator token (tmk_...) to sign in."));
    }
    return authenticator.authenticate("Bearer " + token.trim())
        .recover(err -> Future.failedFuture(Refusal.signIn("That token does not sign in: " + err.getMessage())));
  }
}
