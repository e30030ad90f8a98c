package dev.tidemark.console.impl;

import dev.tidemark.contract.Caller;
import io.vertx.core.json.JsonObject;

/**
 * Who is signed in to the console: the caller their sign-in maps to (a token's, or an OAuth access
 * token's, mapped to a PostgreSQL role exactly as an agent's is), how they signed in, and until when.
 *
 * @param sid the sign-in's id, which its forms are bound to and signing out ends
 * @param via {@code token} or {@code oauth}
 * @param tokenId the id of the token signed in with (null for OAuth), whose revocation, expiry or
 *     replacement by a token of the same name ends the sign-in
 */
record Person(Caller caller, String sid, String via, String tokenId, long expiresAtMs) {

  static final String TOKEN = "token";
  static final String OAUTH = "oauth";

  /** The name decisions are recorded with and the console's settings name people by: a token's name, or oauth:&lt;subject&gt;. */
  String name() {
    return caller.name();
  }

  JsonObject toJson() {
    JsonObject json = new JsonObject().put("sid", sid).put("caller", caller.toJson()).put("via", via).put("exp", expiresAtMs);
    // since when the token signed in with is valid: a token made again under its name later ends the sign-in
    return tokenId == null ? json : json.put("token_id", tokenId).put("valid_since", caller.validSince());
  }

  static Person fromJson(JsonObject json) {
    Caller c = Caller.fromJson(json.getJsonObject("caller"));
    Caller caller = new Caller(c.id(), c.name(), c.pgRole(), c.access(), c.databases(), c.scopes(), c.claims(), json.getLong("valid_since", 0L));
    return new Person(caller, json.getString("sid"), json.getString("via"), json.getString("token_id"), json.getLong("exp"));
  }
}
