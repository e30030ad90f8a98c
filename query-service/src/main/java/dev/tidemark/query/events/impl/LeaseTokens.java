package dev.tidemark.query.events.impl;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.contract.ToolRequest;
import dev.tidemark.database.KeyRingSource;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;

/**
 * Lease tokens: the node, share consumer, batch, group and expiry of a lease ({@code n, s, b, g, e}),
 * sealed with the database's key ring for the caller it was issued to, so any node can route an
 * ack and none can be forged or used by another caller.
 */
public final class LeaseTokens {

  private static final String PURPOSE = "events-lease";

  private final KeyRingSource keys;
  private final ConsumerStore store;

  public LeaseTokens(KeyRingSource keys, ConsumerStore store) {
    this.keys = keys;
    this.store = store;
  }

  String seal(String callerId, JsonObject claims) {
    return keys.ring().seal(PURPOSE, callerId, claims.encode().getBytes(StandardCharsets.UTF_8));
  }

  /** The lease token's claims, once it opened for this caller and this consumer; INVALID_LEASE otherwise. */
  JsonObject claims(ToolRequest request) {
    String token = request.arguments().getString("lease_token", "");
    JsonObject claims = keys.ring().open(PURPOSE, request.caller().id(), token)
        .map(bytes -> new JsonObject(new String(bytes, StandardCharsets.UTF_8)))
        .orElseThrow(() -> new ToolException(ErrorCode.INVALID_LEASE,
            "The lease_token was not issued to you by events_next; nothing changed. " + ErrorCode.INVALID_LEASE.hint(),
            new JsonObject().put("argument", "lease_token")));
    if (!store.groupId(request.caller().id(), request.arguments().getString("consumer")).equals(claims.getString("g"))) {
      throw new ToolException(ErrorCode.INVALID_LEASE, "The lease_token belongs to another consumer; nothing changed. "
          + ErrorCode.INVALID_LEASE.hint(), new JsonObject().put("argument", "lease_token"));
    }
    return claims;
  }
}
