package dev.tidemark.contract;

import io.vertx.core.json.JsonObject;

/**
 * What caused a change, as it travels with the change's signed attribution. The event a change
 * reacted to ({@code caused_by}): in the
 * idempotency key the command role derives from it, which the change's signed attribution records,
 * and from there in what changes_since shows. The key's prefix is reserved: a caller's own key may
 * not take it, so only a checked reaction is shown as caused by an event.
 */
public final class ChangeCause {

  public static final String KEY_PREFIX = "event:";
  /**
   * Where an approved proposal's change records its plan id ({@code proposal:<id>}), so that its
   * attribution, and changes_since, name the proposal; no plan id a caller sends looks like it.
   */
  public static final String PROPOSAL_PREFIX = "proposal:";

  private ChangeCause() {}

  /** The idempotency key of the reaction to {@code eventId} of {@code consumer}. */
  public static String key(String consumer, String eventId) {
    return KEY_PREFIX + consumer + ":" + eventId;
  }

  /** The event a key made by {@link #key} names, as {@code {consumer, event_id}}; null for any other key. */
  public static JsonObject of(String key) {
    if (key == null || !key.startsWith(KEY_PREFIX)) {
      return null;
    }
    int last = key.lastIndexOf(':');
    return last <= KEY_PREFIX.length() ? null
        : new JsonObject().put("consumer", key.substring(KEY_PREFIX.length(), last)).put("event_id", key.substring(last + 1));
  }
}
