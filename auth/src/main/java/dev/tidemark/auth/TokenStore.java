package dev.tidemark.auth;

import dev.tidemark.auth.impl.PgTokenStore;
import dev.tidemark.contract.Access;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import java.util.List;

/** Tokens kept in Tidemark's own schema, hashed. */
public interface TokenStore {

  static TokenStore create(Pool pool) {
    return new PgTokenStore(pool);
  }

  /**
   * Stores {@code token} under {@code name}, replacing the token of that name if there is one.
   *
   * @return the token id
   */
  default Future<String> put(String name, String token, String pgRole, Access access, List<String> databases) {
    return put(name, token, pgRole, access, databases, null);
  }

  /** {@link #put}, valid until {@code expiresAt} (null: until revoked). */
  Future<String> put(String name, String token, String pgRole, Access access, List<String> databases, java.time.Instant expiresAt);

  /** Revokes the token of that name; fails when there is none. */
  Future<Void> revoke(String name);

  /** Every token, without its hash: id, name, pg_role, access, databases, created_at, expires_at, revoked_at. */
  Future<List<JsonObject>> list();

  /**
   * An authenticator backed by this store.
   *
   * @param notices where it LISTENs for revocations, on a connection of its own
   */
  Authenticator authenticator(io.vertx.core.Vertx vertx, PgConnectOptions notices);
}
