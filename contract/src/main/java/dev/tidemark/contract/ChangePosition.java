package dev.tidemark.contract;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Optional;

/**
 * Where a change sits in a database's changelog: its commit's position (taken at commit, so in
 * commit order) and the change's id (in statement order within the commit). Both come from
 * PostgreSQL, so the order survives restarts and is the same on every node.
 *
 * <p>Clients only ever see the opaque {@link #encode(KeyRing) cursor form}: a version byte, the
 * id of the key that signed it, the two numbers and an HMAC under that key of the database's key
 * ring, in base64url. A cursor made up by a client, issued by another database, or signed by a
 * key that has retired, does not verify.
 */
public record ChangePosition(long commit, long change) implements Comparable<ChangePosition> {

  /** Before every change. */
  public static final ChangePosition START = new ChangePosition(0, 0);

  private static final byte VERSION = 2;
  private static final int MAC_BYTES = 16;
  private static final int SIGNED = 1 + 4 + 8 + 8;
  private static final int LENGTH = SIGNED + MAC_BYTES;
  static final String PURPOSE = "changes-cursor";

  @Override
  public int compareTo(ChangePosition o) {
    int c = Long.compare(commit, o.commit);
    return c != 0 ? c : Long.compare(change, o.change);
  }

  public boolean isAfter(ChangePosition o) {
    return compareTo(o) > 0;
  }

  /** The cursor form, signed with the ring's signing key and naming it. */
  public String encode(KeyRing ring) {
    KeyRing.Key key = ring.signing();
    ByteBuffer buf = ByteBuffer.allocate(LENGTH);
    buf.put(VERSION).putInt(key.id()).putLong(commit).putLong(change);
    buf.put(KeyRing.mac(key, PURPOSE, buf.array(), SIGNED), 0, MAC_BYTES);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(buf.array());
  }

  /** The position of a cursor signed by a key of {@code ring} that is not retired; empty when it is malformed, forged or foreign. */
  public static Optional<ChangePosition> decode(String cursor, KeyRing ring) {
    byte[] raw;
    try {
      raw = Base64.getUrlDecoder().decode(cursor);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (raw.length != LENGTH || raw[0] != VERSION) {
      return Optional.empty();
    }
    ByteBuffer buf = ByteBuffer.wrap(raw, 1, SIGNED - 1);
    Optional<KeyRing.Key> key = ring.byId(buf.getInt());
    if (key.isEmpty()) {
      return Optional.empty();
    }
    byte[] expected = java.util.Arrays.copyOf(KeyRing.mac(key.get(), PURPOSE, raw, SIGNED), MAC_BYTES);
    if (!MessageDigest.isEqual(expected, java.util.Arrays.copyOfRange(raw, SIGNED, LENGTH))) {
      return Optional.empty();
    }
    long commit = buf.getLong();
    long change = buf.getLong();
    return commit < 0 || change < 0 ? Optional.empty() : Optional.of(new ChangePosition(commit, change));
  }
}
