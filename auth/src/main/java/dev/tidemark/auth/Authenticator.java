package dev.tidemark.auth;

import dev.tidemark.contract.Caller;
import io.vertx.core.Future;

/** Turns the credentials of a request into a {@link Caller}, or fails with {@link AuthenticationException}. */
public interface Authenticator {

  /**
   * @param authorization the request's {@code Authorization} header, possibly null
   */
  Future<Caller> authenticate(String authorization);
}
