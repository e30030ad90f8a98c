package dev.tidemark.auth.impl;

import dev.tidemark.auth.AuthenticationException;
import dev.tidemark.auth.Authenticator;
import dev.tidemark.auth.TokenStore;
import dev.tidemark.auth.Tokens;
import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import dev.tidemark.auth.Revocation;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

public final class PgTokenStore implements TokenStore {

  /**
   * How long a node reuses a checked token without looking it up again: the cache spares the
   * database a lookup on every request of a busy client. A revocation drops the token from every
   * node's cache at once ({@link RevocationWatcher}); this bounds only what a row changed by hand
   * without the trigger's notice (a DELETE) could cost.
   */
  static final long CACHE_MILLIS = 5_000;

  private final Pool pool;

  public PgTokenStore(Pool pool) {
    this.pool = pool;
  }

  @Override
  public Future<String> put(String name, String token, String pgRole, Access access, List<String> databases,
      java.time.Instant expiresAt) {
    return pool.preparedQuery(
            "INSERT INTO tidemark.api_token(name, token_hash, pg_role, access, databases, expires_at) VALUES ($1, $2, $3, $4, $5, $6) "
                + "ON CONFLICT (name) DO UPDATE SET token_hash = EXCLUDED.token_hash, pg_role = EXCLUDED.pg_role, "
                + "access = EXCLUDED.access, databases = EXCLUDED.databases, expires_at = EXCLUDED.expires_at, revoked_at = NULL "
                + "RETURNING id::text")
        .execute(Tuple.of(name, Tokens.hash(token), pgRole, access.wire(), databases.toArray(new String[0]),
            expiresAt == null ? null : java.time.OffsetDateTime.ofInstant(expiresAt, java.time.ZoneOffset.UTC)))
        .map(rows -> rows.iterator().next().getString(0));
  }

  @Override
  public Future<Void> revoke(String name) {
    return pool.preparedQuery("UPDATE tidemark.api_token SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL")
        .execute(Tuple.of(name))
        .compose(rows -> rows.rowCount() == 1
            ? Future.succeededFuture()
            : Future.failedFuture(new IllegalArgumentException("no active token is named '" + name + "'")));
  }

  @Override
  public Future<List<JsonObject>> list() {
    return pool.query("SELECT id::text, name, pg_role, access, databases, created_at, expires_at, revoked_at "
            + "FROM tidemark.api_token ORDER BY name")
        .execute()
        .map(rows -> {
          List<JsonObject> out = new ArrayList<>();
          for (Row r : rows) {
            JsonObject t = new JsonObject()
                .put("id", r.getString("id"))
                .put("name", r.getString("name"))
                .put("pg_role", r.getString("pg_role"))
                .put("access", r.getString("access"))
                .put("databases", new JsonArray(List.of(r.getArrayOfStrings("databases"))))
                .put("created_at", r.getOffsetDateTime("created_at").toString());
            if (r.getOffsetDateTime("expires_at") != null) {
              t.put("expires_at", r.getOffsetDateTime("expires_at").toString());
            }
            if (r.getOffsetDateTime("revoked_at") != null) {
              t.put("revoked_at", r.getOffsetDateTime("revoked_at").toString());
            }
            out.add(t);
          }
          return out;
        });
  }

  @Override
  public Authenticator authenticator(Vertx vertx, PgConnectOptions notices) {
    return new CachingAuthenticator(vertx, notices);
  }

  private final class CachingAuthenticator implements Authenticator {

    private record Cached(Caller caller, long until) {}

    private final Vertx vertx;
    private final PgConnectOptions notices;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    /** Counts revocations heard; a lookup that overlapped one does not fill the cache. */
    private final AtomicLong revocations = new AtomicLong();
    private volatile RevocationWatcher watcher;

    CachingAuthenticator(Vertx vertx, PgConnectOptions notices) {
      this.vertx = vertx;
      this.notices = notices;
    }

    @Override
    public Future<Void> start(Handler<Revocation> revoked) {
      watcher = new RevocationWatcher(vertx, pool, notices, r -> {
        revocations.incrementAndGet();
        cache.values().removeIf(c -> c.caller().id().equals(r.callerId()));
        revoked.handle(r);
      });
      return watcher.start();
    }

    @Override
    public Future<Void> stop() {
      return watcher == null ? Future.succeededFuture() : watcher.stop();
    }

    @Override
    public Future<Caller> authenticate(String authorization) {
      if (authorization == null || authorization.isBlank()) {
        return Future.failedFuture(new AuthenticationException("This endpoint needs a bearer token: send 'Authorization: Bearer <token>'."));
      }
      if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7) || authorization.length() <= 7) {
        return Future.failedFuture(new AuthenticationException("Only bearer tokens are accepted: send 'Authorization: Bearer <token>'."));
      }
      String hash = Tokens.hash(authorization.substring(7).trim());
      long now = System.currentTimeMillis();
      Cached cached = cache.get(hash);
      // without a recent poll this node may have missed a revocation: look the token up
      if (cached != null && cached.until > now && watcher != null && watcher.fresh()) {
        return Future.succeededFuture(cached.caller);
      }
      long heard = revocations.get();
      return pool.preparedQuery("SELECT id::text, name, pg_role, access, databases, "
              + "(extract(epoch FROM expires_at) * 1000)::int8 AS expires, (extract(epoch FROM clock_timestamp()) * 1000)::int8 AS now, "
              // the time the revocation watcher reports when this token's hash replaced another: revocations up to it concern that one
              + "coalesce((extract(epoch FROM invalidated_at) * 1000)::int8, 0) AS valid_since "
              + "FROM tidemark.api_token WHERE token_hash = $1 AND revoked_at IS NULL")
          .execute(Tuple.of(hash))
          .map(rows -> {
            if (rows.size() == 0) {
              cache.remove(hash);
              throw new AuthenticationException("The bearer token is not valid: it is unknown or was revoked.");
            }
            Row r = rows.iterator().next();
            Long expires = r.getLong("expires");
            if (expires != null && expires <= r.getLong("now")) {
              cache.remove(hash);
              throw new AuthenticationException("The bearer token expired at " + java.time.Instant.ofEpochMilli(expires)
                  + "; ask whoever runs Tidemark for a new one.");
            }
            Caller caller = new Caller(
                r.getString("id"), r.getString("name"), r.getString("pg_role"),
                Access.fromWire(r.getString("access")), List.of(r.getArrayOfStrings("databases")), r.getLong("valid_since"));
            if (cache.size() > 10_000) {
              cache.clear(); // bounded: a flood of distinct valid tokens only costs lookups
            }
            if (revocations.get() == heard) {
              // a revocation heard while the lookup ran may be of this very token: the row read may predate it
              // the database's clock decides expiry: the cache keeps the token no longer than it has left by that clock
              long left = expires == null ? CACHE_MILLIS : expires - r.getLong("now");
              cache.put(hash, new Cached(caller, now + Math.min(CACHE_MILLIS, left)));
            }
            return caller;
          });
    }
  }
}
