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

  /** A consumer held on this node while events_seek moves it or a node removes it. */
  static ToolException held(String name) {
    return unavailable("Consumer " + name + " is being moved (events_seek) or removed; call again in a few seconds (a removed consumer is"
        + " then made anew).");
  }

  /** A caller whose share consumers on this node all hold leases or serve calls; {@code retryAfterMs} until the first lease ends. */
  static ToolException workers(int cap, long retryAfterMs) {
    long retry = Math.max(100, retryAfterMs);
    return new ToolException(ErrorCode.UNAVAILABLE, "Your consumers already hold " + cap + " share consumers on this node, the most one"
        + " caller may (events.max-workers-per-caller), and every one holds a lease or serves a call; nothing was leased. Acknowledge"
        + " events you hold, or call again in about " + retry + " ms, when the first of those leases ends.",
        new JsonObject().put("limit", "events.max-workers-per-caller").put("max_workers", cap).put("retry_after_ms", retry));
  }

  /** A quota of consumers used up: {@code situation}, the key that sets it, the quota and the use. */
  static ToolException quota(String situation, String key, int quota, long use) {
    return new ToolException(ErrorCode.LIMIT_EXCEEDED, situation + " (" + key + ", " + quota + "); no consumer was created. Reuse one"
        + " you have (one consumer serves any number of workers that share its name), or stop calling the ones you no longer need:"
        + " a consumer unused for events.consumer-idle-seconds is removed, and an administrator can delete one (tidemark consumers"
        + " delete).", new JsonObject().put("limit", key).put("max_consumers", quota).put("consumers", use));
  }

  static ToolException expired() {
    return new ToolException(ErrorCode.LEASE_EXPIRED, "The lease of these events ended before this call; nothing was acknowledged,"
        + " and they come again. " + ErrorCode.LEASE_EXPIRED.hint(), new JsonObject().put("argument", "lease_token"));
  }
}
