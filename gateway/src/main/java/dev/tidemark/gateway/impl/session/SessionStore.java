package dev.tidemark.gateway.impl.session;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.shareddata.AsyncMap;
import dev.tidemark.contract.Addresses;
import dev.tidemark.contract.Caller;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * Sessions in cluster-wide storage, so that any gateway can serve any request of a session. A
 * session belongs to the caller that opened it and expires after a period without use.
 *
 * <p>Each gateway also keeps the sessions it served in the last {@link #LOCAL_MILLIS}: reading the
 * cluster map on every request cost more than a read tool's own work (a hand-off to a partition
 * thread and back, and the session decoded again). A gateway that changes or ends a session drops
 * its copy before it answers and publishes {@link Addresses#SESSION_CHANGED_V1}, so the others drop
 * theirs within the time a message takes to cross the cluster; {@link #LOCAL_MILLIS} bounds what a
 * lost message could cost. Which caller owns a session never changes, so a copy can never let
 * another caller in.
 *
 * <p>One per node, shared by every gateway instance: a session served on one event loop is a copy
 * for all of them. The copies are a concurrent map of sessions that nobody changes after they are
 * read (a renewal or an update writes a new object), so any loop may read one.
 */
public final class SessionStore {

  /** Idle sessions end after 30 minutes; requests renew the lease. */
  public static final long IDLE_MILLIS = 30 * 60 * 1000L;
  /**
   * A request renews the lease only when the last renewal is older than this: a write to the
   * cluster map on every request cost more than the read it guards. A session therefore ends
   * between 29 and 30 minutes after its last request.
   */
  public static final long RENEW_MILLIS = 60 * 1000L;
  private static final String RENEWED_AT = "renewed_at";

  /** How long a gateway reuses its copy of a session without reading the cluster map. */
  public static final long LOCAL_MILLIS = 2000;

  private static final SecureRandom RANDOM = new SecureRandom();

  private record Copy(JsonObject session, long readAtNanos) {}

  private final Vertx vertx;
  private final Revocations revocations;
  private final Map<String, Copy> copies = new ConcurrentHashMap<>();
  /** Counts the copies dropped, so that a find that read the map before a drop keeps no copy of what it read. */
  private final AtomicLong drops = new AtomicLong();
  private MessageConsumer<JsonObject> changes;

  public SessionStore(Vertx vertx, Revocations revocations) {
    this.vertx = vertx;
    this.revocations = revocations;
  }

  /** Starts hearing which sessions other gateways changed or ended. */
  public Future<Void> start() {
    changes = vertx.eventBus().consumer(Addresses.SESSION_CHANGED_V1, msg -> drop(msg.body().getString("id", "")));
    return changes.completion();
  }

  public Future<Void> stop() {
    return changes == null ? Future.succeededFuture() : changes.unregister();
  }

  /** Drops every gateway's copy of the session; runs before the change is answered. */
  private void changed(String id) {
    drop(id);
    vertx.eventBus().publish(Addresses.SESSION_CHANGED_V1, new JsonObject().put("id", id));
  }

  private void drop(String id) {
    drops.incrementAndGet();
    copies.remove(id);
  }

  private JsonObject recentCopy(String id) {
    Copy c = copies.get(id);
    if (c == null || System.nanoTime() - c.readAtNanos() > LOCAL_MILLIS * 1_000_000L) {
      return null;
    }
    return c.session();
  }

  /** Keeps {@code session}, read when {@link #drops} was {@code seen}, unless a copy was dropped since. */
  private void keepCopy(String id, JsonObject session, long seen) {
    if (copies.size() > MAX_COPIES) {
      copies.clear(); // bounded: past this many live sessions a copy is only an optimisation
    }
    Copy copy = new Copy(session, System.nanoTime());
    // under the entry's lock, which a drop's removal takes after it counted: a drop either is seen here or removes this copy
    copies.compute(id, (k, old) -> drops.get() == seen ? copy : old);
  }

  private static final int MAX_COPIES = 100_000;

  private Future<AsyncMap<String, JsonObject>> map() {
    return vertx.sharedData().getAsyncMap(Addresses.SESSIONS_MAP);
  }

  /** A new session id: 128 random bits as hex, visible ASCII only. */
  public Future<String> create(Caller caller, String database, String protocolVersion, JsonObject clientInfo,
      JsonObject clientCapabilities) {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    String id = HexFormat.of().formatHex(bytes);
    JsonObject session = new JsonObject()
        .put("caller_id", caller.id())
        // a revocation up to this time ended a credential this one replaced, not this session's
        .put("valid_since", caller.validSince())
        .put("database", database)
        .put("protocol_version", protocolVersion)
        .put("client_info", clientInfo == null ? new JsonObject() : clientInfo)
        .put("client_capabilities", clientCapabilities == null ? new JsonObject() : clientCapabilities)
        .put("subscriptions", new io.vertx.core.json.JsonArray())
        .put("created_at", System.currentTimeMillis())
        .put(RENEWED_AT, System.currentTimeMillis());
    return map().compose(m -> m.put(id, session, IDLE_MILLIS)).map(id);
  }

  /**
   * The session if it exists, belongs to this caller and database, and was opened after the
   * caller's token was last revoked; null otherwise.
   */
  public Future<JsonObject> find(String id, String callerId, String database) {
    JsonObject copy = recentCopy(id);
    if (copy != null && System.currentTimeMillis() - copy.getLong(RENEWED_AT, 0L) < RENEW_MILLIS) {
      return Future.succeededFuture(owned(copy, callerId, database) ? copy : null);
    }
    long seen = drops.get();
    return map().compose(m -> m.get(id).compose(session -> {
      if (session == null || !owned(session, callerId, database)) {
        return Future.succeededFuture(null);
      }
      long now = System.currentTimeMillis();
      if (now - session.getLong(RENEWED_AT, 0L) < RENEW_MILLIS) {
        keepCopy(id, session, seen);
        return Future.succeededFuture(session);
      }
      JsonObject renewed = session.copy().put(RENEWED_AT, now);
      return m.put(id, renewed, IDLE_MILLIS).map(v -> {
        keepCopy(id, renewed, seen);
        return session;
      });
    }));
  }

  private boolean owned(JsonObject session, String callerId, String database) {
    return callerId.equals(session.getString("caller_id")) && database.equals(session.getString("database"))
        && !revocations.endedSession(callerId, session.getLong("created_at", 0L), session.getLong("valid_since", 0L));
  }

  /** Sets one field of a session (log level, subscriptions); last writer wins. */
  public Future<Void> update(String id, String field, Object value) {
    return map().compose(m -> m.get(id).compose(session -> session == null
        ? Future.succeededFuture()
        : m.put(id, session.copy().put(field, value), IDLE_MILLIS).onSuccess(v -> changed(id))));
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
      return m.remove(id).map(v -> {
        changed(id);
        return true;
      });
    }));
  }
}
