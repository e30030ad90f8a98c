package dev.tidemark.database;

import dev.tidemark.contract.ErrorCode;
import dev.tidemark.contract.ToolException;
import dev.tidemark.keys.KeyRing;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A database's key ring, read from {@code tidemark.key_ring} as the login and read again every
 * {@code keys.refresh-seconds}, so that a rotation reaches every node without a restart. A failed
 * reload keeps the keys last read. A node may start while PostgreSQL is unreachable (it is then
 * not ready); until the ring was read once, a call that needs it is UNAVAILABLE and tries to read
 * it again, at most once a second.
 */
public final class KeyRingSource {

  private static final Logger LOG = LoggerFactory.getLogger(KeyRingSource.class);
  private static final long RETRY_MS = 1000;


  private final Pool pool;
  private volatile KeyRing ring;
  private volatile long lastTryMs;

  private KeyRingSource(Pool pool) {
    this.pool = pool;
  }

  /** Reads the ring, then keeps it fresh on a timer of {@code vertx} (cancelled with the caller's verticle). */
  public static Future<KeyRingSource> start(Vertx vertx, Pool pool, long refreshSeconds) {
    KeyRingSource source = new KeyRingSource(pool);
    vertx.setPeriodic(refreshSeconds * 1000, t -> source.reload());
    return source.reload().map(source).recover(err -> {
      // a first read that failed (PostgreSQL down, or busy past database.pool-wait-ms) is tried again every second until
      // it succeeds, not only at the next refresh: until then every call that needs the keys is UNAVAILABLE
      vertx.setPeriodic(RETRY_MS, RETRY_MS, t -> {
        if (source.ring != null) {
          vertx.cancelTimer(t);
        } else if (System.currentTimeMillis() - source.lastTryMs >= RETRY_MS) {
          source.reload();
        }
      });
      return Future.succeededFuture(source);
    });
  }

  /** The keys last read; UNAVAILABLE when they were never read. */
  public KeyRing ring() {
    KeyRing r = ring;
    if (r == null) {
      if (System.currentTimeMillis() - lastTryMs > RETRY_MS) {
        reload();
      }
      throw new ToolException(ErrorCode.UNAVAILABLE, "Tidemark could not read its keys from the database yet. "
          + ErrorCode.UNAVAILABLE.hint());
    }
    return r;
  }

  private Future<Void> reload() {
    lastTryMs = System.currentTimeMillis();
    return read(pool).onSuccess(r -> ring = r)
        .onFailure(err -> LOG.warn("reading the key ring failed{}: {}", ring == null ? "" : ", keeping the keys last read",
            SqlErrors.describe(err)))
        .mapEmpty();
  }

  static Future<KeyRing> read(Pool pool) {
    return pool.query(KeyRing.SQL).execute().compose(rows -> {
      List<KeyRing.Key> keys = new ArrayList<>();
      for (Row r : rows) {
        keys.add(KeyRing.Key.of(r.getInteger("id"), r.getBuffer("secret").getBytes(), r.getOffsetDateTime("active_from"),
            r.getOffsetDateTime("retires_at")));
      }
      return keys.isEmpty()
          ? Future.failedFuture(new IllegalStateException("tidemark.key_ring holds no key that is not retired; run tidemark keys rotate"))
          : Future.succeededFuture(new KeyRing(keys));
    });
  }
}
