package dev.tidemark.gateway.impl;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Sessions in cluster-wide storage, so that any gateway can serve any request of a session. A
 * session belongs to the caller that opened it and expires after a period without use.
 */
public final class SessionStore {

  public static final String MAP_NAME = "tidemark.sessions.v1";
  /** Idle sessions end after 30 minutes; requests renew the lease. */
  public static final long IDLE_MILLIS = 30 * 60 * 1000L;
  /**
   * A request renews the lease only when the last renewal is older than this: a write to the
   * cluster map on every request cost more than the read it guards. A session therefore ends
   * between 29 and 30 minutes after its last request.
   */
  public static final long RENEW_MILLIS = 60 * 1000L;
  private static final String RENEWED_AT = "renewed_at";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Vertx vertx;

  public SessionStore(Vertx vertx) {
    this.vertx = vertx;
  }

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(MAP_NAME);
  }

  /** A new session id: 128 random bits as hex, visible ASCII only. */
  public Future<String> create(String callerId, String database, String protocolVersion, JsonObject clientInfo,
      JsonObject clientCapabilities) {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    String id = HexFormat.of().formatHex(bytes);
    JsonObject session = new JsonObject()
        .put("caller_id", callerId)
        .put("database", database)
        .put("protocol_version", protocolVersion)
        .put("client_info", clientInfo == null ? new JsonObject() : clientInfo)
        .put("client_capabilities", clientCapabilities == null ? new JsonObject() : clientCapabilities)
        .put("subscriptions", new io.vertx.core.json.JsonArray())
        .put("created_at", System.currentTimeMillis())
        .put(RENEWED_AT, System.currentTimeMillis());
    return map().compose(m -> m.put(id, session, IDLE_MILLIS)).map(id);
  }

  /** The session if it exists and belongs to this caller and database; null otherwise. */
  public Future<JsonObject> find(String id, String callerId, String database) {
    return map().compose(m -> m.get(id).compose(session -> {
      if (session == null || !callerId.equals(session.getString("caller_id")) || !database.equals(session.getString("database"))) {
        return Future.succeededFuture(null);
      }
      long now = System.currentTimeMillis();
      if (now - session.getLong(RENEWED_AT, 0L) < RENEW_MILLIS) {
        return Future.succeededFuture(session);
      }
      return m.put(id, session.copy().put(RENEWED_AT, now), IDLE_MILLIS).map(session);
    }));
  }

  /** Sets one field of a session (log level, subscriptions); last writer wins. */
  public Future<Void> update(String id, String field, Object value) {
    return map().compose(m -> m.get(id).compose(session -> session == null
        ? Future.succeededFuture()
        : m.put(id, session.copy().put(field, value), IDLE_MILLIS)));
  }

  /** The session by id alone, for delivery; null when it ended or expired. */
  public Future<JsonObject> get(String id) {
    return map().compose(m -> m.get(id));
  }

  public Future<Boolean> delete(String id, String callerId) {
    return map().compose(m -> m.get(id).compose(session -> {
      if (session == null || !callerId.equals(session.getString("caller_id"))) {
        return Future.succeededFuture(false);
      }
      return m.remove(id).map(true);
    }));
  }
}
