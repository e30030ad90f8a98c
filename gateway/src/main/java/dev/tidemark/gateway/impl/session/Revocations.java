package dev.tidemark.gateway.impl.session;

import dev.tidemark.auth.Revocation;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The callers whose token this gateway heard was revoked, for as long as a session opened before
 * could still exist. A token replaced by one of the same name keeps its caller id, so a session
 * is refused by when it was opened, not by whose it is. One per node: the node's one revocation
 * listener writes it and every gateway instance reads it, so it is a concurrent map.
 */
public final class Revocations {

  /** Kept longer than a session can stay idle, after which every session opened before has ended. */
  static final long KEEP_MILLIS = SessionStore.IDLE_MILLIS + 10 * 60_000L;

  private record Heard(long atMillis, long heardAtNanos) {}

  private final Map<String, Heard> heard = new ConcurrentHashMap<>();
  private final LongSupplier millis;
  private final LongSupplier nanos;

  public Revocations() {
    this(System::currentTimeMillis, System::nanoTime);
  }

  /** With clocks of a test's own: wall-clock milliseconds, and the monotonic nanoseconds of {@link #heardSince}. */
  Revocations(LongSupplier millis, LongSupplier nanos) {
    this.millis = millis;
    this.nanos = nanos;
  }

  public void note(Revocation r) {
    long now = millis.getAsLong();
    heard.values().removeIf(h -> now - h.atMillis() > KEEP_MILLIS);
    heard.merge(r.callerId(), new Heard(r.atMillis(), nanos.getAsLong()), (old, next) -> next.atMillis() >= old.atMillis() ? next : old);
  }

  /**
   * Whether a session of {@code callerId} opened at {@code createdAtMillis} (the opening gateway's
   * clock) predates the caller's last revocation (the database's clock). Clocks a few milliseconds
   * apart can at worst refuse a session opened in those milliseconds, which the client then opens again.
   */
  public boolean endedSession(String callerId, long createdAtMillis) {
    Heard h = heard.get(callerId);
    return h != null && createdAtMillis <= h.atMillis();
  }

  /**
   * Whether this gateway heard of a revocation of {@code callerId} after {@code sinceNanos}: a
   * request whose credentials were checked before then may have been let in by a row read just
   * before the revocation committed.
   */
  public boolean heardSince(String callerId, long sinceNanos) {
    Heard h = heard.get(callerId);
    return h != null && h.heardAtNanos() - sinceNanos >= 0;
  }
}
