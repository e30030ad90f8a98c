package dev.tidemark.contract;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Where a change sits in a database's changelog: its commit's position (taken at commit, so in
 * commit order) and the change's id (in statement order within the commit). Both come from
 * PostgreSQL, so the order survives restarts and is the same on every node.
 *
 * <p>Clients only ever see the opaque {@link #encode(byte[]) cursor form}: a version byte, the
 * two numbers and an HMAC keyed with the database's own changelog secret, in base64url. A cursor
 * made up by a client, or issued by another database, does not verify.
 */
public record ChangePosition(long commit, long change) implements Comparable<ChangePosition> {

  /** Before every change. */
  public static final ChangePosition START = new ChangePosition(0, 0);

  private static final byte VERSION = 1;
  private static final int MAC_BYTES = 16;
  private static final int LENGTH = 1 + 8 + 8 + MAC_BYTES;

  @Override
  public int compareTo(ChangePosition o) {
    int c = Long.compare(commit, o.commit);
    return c != 0 ? c : Long.compare(change, o.change);
  }

  public boolean isAfter(ChangePosition o) {
    return compareTo(o) > 0;
  }

  public String encode(byte[] key) {
    ByteBuffer buf = ByteBuffer.allocate(LENGTH);
    buf.put(VERSION).putLong(commit).putLong(change);
    buf.put(mac(key, buf.array(), 17));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(buf.array());
  }

  /** The position of a cursor issued with {@code key}; empty when it is malformed, forged or foreign. */
  public static Optional<ChangePosition> decode(String cursor, byte[] key) {
    byte[] raw;
    try {
      raw = Base64.getUrlDecoder().decode(cursor);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (raw.length != LENGTH || raw[0] != VERSION) {
      return Optional.empty();
    }
    byte[] expected = mac(key, raw, 17);
    byte[] given = java.util.Arrays.copyOfRange(raw, 17, LENGTH);
    if (!MessageDigest.isEqual(expected, given)) {
      return Optional.empty();
    }
    ByteBuffer buf = ByteBuffer.wrap(raw, 1, 16);
    long commit = buf.getLong();
    long change = buf.getLong();
    return commit < 0 || change < 0 ? Optional.empty() : Optional.of(new ChangePosition(commit, change));
  }

  private static byte[] mac(byte[] key, byte[] data, int length) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(data, 0, length);
      return java.util.Arrays.copyOf(mac.doFinal(), MAC_BYTES);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }
}
