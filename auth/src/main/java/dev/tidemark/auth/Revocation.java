package dev.tidemark.auth;

/**
 * A token stopped being valid: revoked, or replaced by a token of the same name.
 *
 * @param callerId the id of the caller the token identified ({@code Caller.id()})
 * @param atMillis when, by the database's clock, in milliseconds since the epoch
 */
public record Revocation(String callerId, long atMillis) {}
