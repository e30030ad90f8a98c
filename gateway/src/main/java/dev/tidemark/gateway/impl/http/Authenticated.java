package dev.tidemark.gateway.impl.http;

import dev.tidemark.contract.Caller;

/**
 * A request that passed every check before its body: who sent it, the database it addresses, and
 * when its credentials were checked, so that a revocation heard since can still end what it starts;
 * {@code toolset} is the toolset its path names ({@code /mcp/{database}/{toolset}}), null for none.
 */
public record Authenticated(Caller caller, String database, long atNanos, String toolset) {

  public Authenticated(Caller caller, String database, long atNanos) {
    this(caller, database, atNanos, null);
  }

  public Authenticated withToolset(String toolset) {
    return new Authenticated(caller, database, atNanos, toolset);
  }
}
