package dev.tidemark.keys;

import dev.tidemark.contract.ChangePosition;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;
import java.util.Optional;

/**
 * The cursor form of a {@link ChangePosition}, the only form clients see: a version byte, the id
 * of the key that signed it, the two numbers and an HMAC under that key of the database's key
 * ring, in base64url. A cursor made up by a client, issued by another database, or signed by a
 * key that has retired, does not verify.
 */
public final class ChangeCursor {

  private static final byte VERSION = 2;
  private static final int MAC_BYTES = 16;
  private static final int SIGNED = 1 + 4 + 8 + 8;
  private static final int LENGTH = SIGNED + MAC_BYTES;
  static final String PURPOSE = "changes-cursor";

  private ChangeCursor() {}

  /** The cursor of {@code position}, signed with the ring's signing key and naming it. */
  public static String encode(ChangePosition position, KeyRing ring) {
    KeyRing.Key key = ring.signing();
    ByteBuffer buf = ByteBuffer.allocate(LENGTH);
    buf.put(VERSION).putInt(key.id()).putLong(position.commit()).putLong(position.change());
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
    byte[] expected = Arrays.copyOf(KeyRing.mac(key.get(), PURPOSE, raw, SIGNED), MAC_BYTES);
    if (!MessageDigest.isEqual(expected, Arrays.copyOfRange(raw, SIGNED, LENGTH))) {
      return Optional.empty();
    }
    long commit = buf.getLong();
    long change = buf.getLong();
    return commit < 0 || change < 0 ? Optional.empty() : Optional.of(new ChangePosition(commit, change));
  }
}
