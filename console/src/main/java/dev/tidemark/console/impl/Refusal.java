package dev.tidemark.console.impl;

import dev.tidemark.contract.ErrorCode;

/**
 * A request the console refuses, as a page: the HTTP status, the error code (declared in
 * {@link ErrorCode}), and a message that says what happened and what to do next. Nothing was done.
 */
final class Refusal extends RuntimeException {

  final int status;
  final ErrorCode code;
  final String title;

  Refusal(int status, ErrorCode code, String title, String message) {
    super(message, null, false, false);
    this.status = status;
    this.code = code;
    this.title = title;
  }

  static Refusal signIn(String message) {
    return new Refusal(401, ErrorCode.SIGN_IN_REQUIRED, "Sign in again", message);
  }

  static Refusal form(String message) {
    return new Refusal(403, ErrorCode.FORM_REFUSED, "Form refused", message);
  }

  static Refusal notAllowed(String message) {
    return new Refusal(403, ErrorCode.PERMISSION_DENIED, "Not allowed", message);
  }

  static Refusal badInput(String message) {
    return new Refusal(400, ErrorCode.INVALID_ARGUMENTS, "Not understood", message);
  }
}
