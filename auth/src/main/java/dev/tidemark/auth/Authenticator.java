package dev.tidemark.auth;

import dev.tidemark.contract.Caller;
import io.vertx.core.Future;
import io.vertx.core.Handler;

/** Turns the credentials of a request into a {@link Caller}, or fails with {@link AuthenticationException}. */
public interface Authenticator {

  /**
   * @param authorization the request's {@code Authorization} header, possibly null
   */
  Future<Caller> authenticate(String authorization);

  /**
   * @param resource the public URL of the endpoint the request addressed (RFC 8707), which an OAuth
   *     access token must name as its audience; null when the node has no public URL
   */
  default Future<Caller> authenticate(String authorization, String resource) {
    return authenticate(authorization);
  }

  /**
   * Starts hearing of revocations: {@code revoked} is called once for each token that stops being
   * valid, on this node, soon after (within a second); by then this authenticator refuses it.
   * Call it on the context that uses the authenticator. Default: credentials that are never revoked.
   */
  default Future<Void> start(Handler<Revocation> revoked) {
    return Future.succeededFuture();
  }

  default Future<Void> stop() {
    return Future.succeededFuture();
  }
}
