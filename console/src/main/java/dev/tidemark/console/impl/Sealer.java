package dev.tidemark.console.impl;

import dev.tidemark.database.KeyRingSource;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Values the console hands to a browser and reads back (the sign-in cookie, form tokens, the OAuth
 * state), sealed with the default database's key ring: encrypted and authenticated, so any node
 * opens them and nobody reads or forges one, and each purpose's values open for that purpose only.
 */
final class Sealer {

  private final KeyRingSource keys;

  Sealer(KeyRingSource keys) {
    this.keys = keys;
  }

  /** {@code value} sealed for {@code purpose}, bound to {@code boundTo} (a sign-in's id, or the purpose alone). */
  String seal(String purpose, String boundTo, JsonObject value) {
    return keys.ring().seal("tidemark.console." + purpose, boundTo, value.encode().getBytes(StandardCharsets.UTF_8));
  }

  /** What {@link #seal} sealed for this purpose and binding; empty for anything else, or anything altered. */
  Optional<JsonObject> open(String purpose, String boundTo, String sealed) {
    if (sealed == null || sealed.isEmpty() || sealed.length() > 16_384) {
      return Optional.empty();
    }
    return keys.ring().open("tidemark.console." + purpose, boundTo, sealed).flatMap(bytes -> {
      try {
        return Optional.of(new JsonObject(new String(bytes, StandardCharsets.UTF_8)));
      } catch (DecodeException | ClassCastException e) {
        return Optional.empty();
      }
    });
  }
}
