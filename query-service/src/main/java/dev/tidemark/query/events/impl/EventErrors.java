package dev.tidemark.query.events.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import io.vertx.core.json.JsonObject;

/** The refusals the events tools share, worded once. */
final class EventErrors {

  private EventErrors() {}

  static ToolException unavailable(String message) {
    return new ToolException(ErrorCode.UNAVAILABLE, message + " " + ErrorCode.UNAVAILABLE.hint());
  }

  static ToolException expired() {
    return new ToolException(ErrorCode.LEASE_EXPIRED, "The lease of these events ended before this call; nothing was acknowledged,"
        + " and they come again. " + ErrorCode.LEASE_EXPIRED.hint(), new JsonObject().put("argument", "lease_token"));
  }
}
