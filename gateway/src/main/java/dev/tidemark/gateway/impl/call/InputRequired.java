package dev.tidemark.gateway.impl.call;

/** Raised by {@link CallContext#request} on the 2026-07-28 era when the client's input is not there yet. */
public final class InputRequired extends RuntimeException {
  InputRequired() {
    super("input required", null, false, false);
  }
}
