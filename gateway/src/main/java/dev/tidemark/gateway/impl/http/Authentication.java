package dev.tidemark.gateway.impl.http;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.gateway.impl.context.OwnContext;
import dev.tidemark.gateway.impl.session.Revocations;
import dev.tidemark.gateway.impl.spec.McpHeaders;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import java.util.List;

/**
 * The credential check, and the connection slot that passing it earns. Fails with a {@link Refusal}:
 * 401 (or 503 when credentials cannot be checked), both slowed down to make guessing slow; 403 for a
 * token that may not reach the database; 503 when this gateway holds all the connections it may.
 * One per node, shared by every gateway instance: the connection slots and the counts of failed
 * checks are the node's, so no limit is multiplied by the number of event loops.
 */
public final class Authentication {

  /** A failed credential check is answered no sooner than this, to slow down guessing. */
  public static final long FAILED_AUTH_DELAY_MILLIS = 250;
  /** What a request, stream or call of a caller whose token was revoked ends with. */
  public static final String REVOKED_MESSAGE = "The bearer token was revoked; requests with it are refused.";

  private final Vertx vertx;
  private final Authenticator authenticator;
  private final ConnectionSlots slots;
  private final Revocations revocations;
  private final String anonymousRole;
  private final Challenges challenges;
  private final FailedCredentials failures = new FailedCredentials();

  /** @param authenticator null when {@code auth.enabled} is false: every request is the anonymous reader */
  public Authentication(Vertx vertx, Authenticator authenticator, ConnectionSlots slots, Revocations revocations, String anonymousRole,
      Challenges challenges) {
    this.vertx = vertx;
    this.authenticator = authenticator;
    this.slots = slots;
    this.revocations = revocations;
    this.anonymousRole = anonymousRole;
    this.challenges = challenges;
  }

  /**
   * @param database the database the request addresses
   * @param databaseInPath the database its path names, or null for the default endpoint: each endpoint
   *     is a resource of its own, which an access token must be issued for
   */
  public Future<Authenticated> check(HttpServerRequest request, String database, String databaseInPath) {
    long started = System.nanoTime();
    if (authenticator == null) {
      return admit(request, new Caller("anonymous", "anonymous", anonymousRole, Access.READ_ONLY, List.of("*")), database, started);
    }
    String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
    String challenge = challenges.unauthorized(authorization != null, databaseInPath);
    // heard on the request's own loop: the authenticator is the node's, and a lookup that several
    // requests share (an issuer's keys fetched once) completes on the loop of the one that began it
    HttpConnection connection = request.connection();
    slots.checking(connection);
    return OwnContext.of(authenticator.authenticate(authorization, challenges.resource(databaseInPath)))
        .andThen(checked -> slots.checked(connection))
        .compose(caller -> revocations.heardSince(caller, started)
            ? Future.failedFuture(new AuthenticationException(REVOKED_MESSAGE)) // checked against a row read before the revocation
            : Future.succeededFuture(caller))
        .compose(caller -> caller.mayReach(database)
            ? admit(request, caller, database, started)
            : Refusal.http(403, "This token may not reach this database.").future(), err -> refused(request, err, challenge));
  }

  private Future<Authenticated> admit(HttpServerRequest request, Caller caller, String database, long started) {
    if (!slots.authenticate(request.connection())) {
      return Refusal.http(503, "This gateway holds its maximum of " + slots.maxAuthenticated()
              + " authenticated connections; retry shortly, or reuse an open connection.")
          .with(HttpHeaders.RETRY_AFTER.toString(), "1").with(HttpHeaders.CONNECTION.toString(), "close").future();
    }
    return Future.succeededFuture(new Authenticated(caller, database, started));
  }

  private Future<Authenticated> refused(HttpServerRequest request, Throwable err, String challenge) {
    long delay = FAILED_AUTH_DELAY_MILLIS;
    if (err instanceof AuthenticationException) {
      slots.refused(request.connection());  // its 401 closes it: the first to go if the pool fills meanwhile
      // the message says why (unknown, expired, revoked...), never what was sent
      delay = failures.failed(source(request), err.getMessage());
    }
    Promise<Authenticated> delayed = Promise.promise();
    vertx.setTimer(delay, t -> delayed.fail(refusal(err, challenge)));
    return delayed.future();
  }

  private static String source(HttpServerRequest request) {
    return request.remoteAddress() == null ? "unknown" : request.remoteAddress().hostAddress();
  }

  /** A refused credential is a 401; a check that could not be made is a 503, since the same token may pass in a moment. */
  static Refusal refusal(Throwable err) {
    return refusal(err, McpHeaders.INVALID_TOKEN_CHALLENGE);
  }

  /** @param challenge the 401's {@code WWW-Authenticate} ({@link Challenges#unauthorized}) */
  static Refusal refusal(Throwable err, String challenge) {
    return err instanceof AuthenticationException
        // a socket that failed its credential check is let go, however it authenticated before
        ? Refusal.http(401, err.getMessage()).with("WWW-Authenticate", challenge)
            .with(HttpHeaders.CONNECTION.toString(), "close")
        : Refusal.http(503, "Credentials could not be checked right now; retry shortly.");
  }
}
