package dev.tidemark.gateway.impl.session;

import dev.tidemark.auth.Revocation;
import dev.tidemark.contract.Caller;
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
   * clock) with a credential valid since {@code validSince} ({@link Caller#validSince()}) predates
   * the caller's last revocation (the database's clock) and was opened with a credential it ended.
   * Clocks a few milliseconds apart can at worst refuse a session opened in those milliseconds,
   * which the client then opens again; never one opened with the token that replaced a revoked one.
   */
  public boolean endedSession(String callerId, long createdAtMillis, long validSince) {
    Heard h = heard.get(callerId);
    return h != null && createdAtMillis <= h.atMillis() && h.atMillis() > validSince;
  }

  /**
   * Whether this gateway heard, after {@code sinceNanos}, of a revocation that ends {@code caller}'s
   * credential: a request whose credentials were checked before then may have been let in by a row
   * read just before the revocation committed. A revocation the credential postdates (the one that
   * replaced a token by this one under the same name, heard late) does not count.
   */
  public boolean heardSince(Caller caller, long sinceNanos) {
    Heard h = heard.get(caller.id());
    return h != null && h.heardAtNanos() - sinceNanos >= 0 && caller.revokedBy(h.atMillis());
  }
}
