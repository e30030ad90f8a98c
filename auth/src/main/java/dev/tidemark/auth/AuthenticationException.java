package dev.tidemark.auth;

/** The request carries no valid credentials. The message is safe to show; it never repeats the token. */
public final class AuthenticationException extends RuntimeException {

  public AuthenticationException(String message) {
    super(message, null, false, false);
  }
}
