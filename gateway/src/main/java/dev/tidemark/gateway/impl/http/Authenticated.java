package dev.tidemark.gateway.impl.http;

import dev.tidemark.contract.Caller;

/**
 * A request that passed every check before its body: who sent it, the database it addresses, and
 * when its credentials were checked, so that a revocation heard since can still end what it starts.
 */
public record Authenticated(Caller caller, String database, long atNanos) {}
