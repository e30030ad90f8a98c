package dev.tidemark.gateway.impl.http;

import io.vertx.core.http.HttpConnection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The connections one gateway holds, in two pools so that sockets without credentials can never
 * take a slot a caller needs. A connection starts unauthenticated; it moves to the authenticated
 * pool (capped by {@code http.max-connections}) when a request of it passes the credential check.
 * Unauthenticated connections are capped apart ({@code http.max-unauthenticated-connections}):
 * past that cap the one that has waited longest is closed, so a flood of refused or stalled
 * sockets costs a new client at most a retry, never a refusal while the flood lasts. A connection
 * whose credentials were refused (its 401 is delayed, to slow down guessing) goes before any other:
 * it is let go anyway. A connection whose credentials are being checked right now is passed over:
 * the check ends in a moment, either way, and a caller whose check waits on a lookup must not lose
 * its socket to the flood's newer ones. Vert.x hands a
 * connection to {@link #opened} with its first request head, not when it is accepted: a socket
 * that never sends a whole head is not counted here, and {@code http.idle-timeout-seconds} (the
 * deadline for a request's headers) closes it.
 *
 * <p>One per node: every gateway instance (one per event loop) opens and authenticates its own
 * connections here, so both caps are the node's. The pools change under a lock, held for a set
 * operation and never while a connection is closed: each connection is opened, authenticated and
 * closed on its own loop, and any loop may close the one it evicts (Vert.x closes it on its own).
 */
public final class ConnectionSlots {

  private final int maxAuthenticated;
  private final int maxUnauthenticated;
  /** In the order they opened: the first is the one to close when the pool is full. */
  private final LinkedHashSet<HttpConnection> unauthenticated = new LinkedHashSet<>();
  private final Set<HttpConnection> authenticated = Collections.newSetFromMap(new IdentityHashMap<>());
  /** Unauthenticated connections whose credential check has begun and not ended. */
  private final Set<HttpConnection> checking = Collections.newSetFromMap(new IdentityHashMap<>());
  /** Unauthenticated connections whose credentials were refused: the first to go. */
  private final Set<HttpConnection> refused = Collections.newSetFromMap(new IdentityHashMap<>());

  public ConnectionSlots(int maxAuthenticated, int maxUnauthenticated) {
    this.maxAuthenticated = maxAuthenticated;
    this.maxUnauthenticated = maxUnauthenticated;
  }

  /** A new connection: it waits in the unauthenticated pool, and the oldest waiting one goes when the pool is full. */
  public void opened(HttpConnection connection) {
    HttpConnection evicted = null;
    synchronized (this) {
      unauthenticated.add(connection);
      if (unauthenticated.size() > maxUnauthenticated) {
        // the oldest refused one, else the oldest not being checked: the new connection is neither
        // refused nor being checked yet, so one is always found
        for (HttpConnection candidate : unauthenticated) {
          if (refused.contains(candidate)) {
            evicted = candidate;
            break;
          }
          if (evicted == null && !checking.contains(candidate)) {
            evicted = candidate;
            if (refused.isEmpty()) {
              break;
            }
          }
        }
        unauthenticated.remove(evicted);
        refused.remove(evicted);
      }
    }
    connection.closeHandler(v -> closed(connection));
    if (evicted != null) {
      evicted.close();
    }
  }

  private synchronized void closed(HttpConnection connection) {
    unauthenticated.remove(connection);
    authenticated.remove(connection);
    checking.remove(connection);
    refused.remove(connection);
  }

  /** The connection's credentials were refused: it is answered later (or closed) and goes first when the pool is full. */
  public synchronized void refused(HttpConnection connection) {
    checking.remove(connection);
    if (unauthenticated.contains(connection)) {
      refused.add(connection);
    }
  }

  /** A request of the connection has begun its credential check: the connection is not evicted until {@link #checked}. */
  public synchronized void checking(HttpConnection connection) {
    if (unauthenticated.contains(connection)) {
      checking.add(connection);
    }
  }

  /** The credential check of {@link #checking} ended, passed or not. */
  public synchronized void checked(HttpConnection connection) {
    checking.remove(connection);
  }

  /**
   * Moves a connection whose request passed the credential check into the authenticated pool.
   * False when that pool is full (or the connection was already let go): the request is refused
   * and the connection closed, and it keeps no slot of either pool.
   */
  public synchronized boolean authenticate(HttpConnection connection) {
    if (authenticated.contains(connection)) {
      return true;
    }
    if (!unauthenticated.remove(connection) || authenticated.size() >= maxAuthenticated) {
      return false;
    }
    authenticated.add(connection);
    checking.remove(connection);
    return true;
  }

  public synchronized boolean isAuthenticated(HttpConnection connection) {
    return authenticated.contains(connection);
  }

  public int maxAuthenticated() {
    return maxAuthenticated;
  }
}
