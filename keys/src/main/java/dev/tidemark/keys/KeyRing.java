package dev.tidemark.keys;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The keys of a database's key ring ({@code tidemark.key_ring}), as one node last loaded them.
 * The newest key that is active signs and encrypts; every key not yet retired verifies and
 * decrypts, so a rotation has a grace period in which what the previous key made still holds.
 *
 * <p>What callers carry (page cursors, plan ids) is sealed with AES-256-GCM under a key derived
 * per purpose, with the caller's id as associated data: nobody can read one without the server's
 * key, alter one, or use one that another caller was given. Each sealed value names its key's id,
 * so a node finds the key without trying them all.
 */
public final class KeyRing {

  /** One key; times in milliseconds since 1970, {@code retiresAtMs} {@link Long#MAX_VALUE} for never. */
  public record Key(int id, byte[] secret, long activeFromMs, long retiresAtMs) {

    public Key {
      if (secret.length != 32) {
        throw new IllegalArgumentException("a key ring secret has 32 bytes");
      }
      secret = secret.clone();
    }

    /** A key as {@link KeyRing#SQL} reads it; a null {@code retiresAt} never retires. */
    public static Key of(int id, byte[] secret, java.time.OffsetDateTime activeFrom, java.time.OffsetDateTime retiresAt) {
      return new Key(id, secret, activeFrom.toInstant().toEpochMilli(),
          retiresAt == null ? Long.MAX_VALUE : retiresAt.toInstant().toEpochMilli());
    }

    boolean verifiesAt(long nowMs) {
      return retiresAtMs > nowMs;
    }
  }

  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder B64D = Base64.getUrlDecoder();
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final byte VERSION = 2;
  private static final int IV_BYTES = 12;
  private static final int TAG_BITS = 128;

  /** Reads the keys that are not retired; {@code secret} is bytea, the times timestamptz. */
  public static final String SQL = "SELECT id, secret, active_from, retires_at FROM tidemark.key_ring"
      + " WHERE retires_at IS NULL OR retires_at > now() ORDER BY id";

  private final List<Key> keys;

  /** @param keys in any order; at least one */
  public KeyRing(List<Key> keys) {
    if (keys.isEmpty()) {
      throw new IllegalArgumentException("a key ring needs a key");
    }
    this.keys = List.copyOf(keys);
  }

  public List<Key> keys() {
    return keys;
  }

  /**
   * The key that signs now: the newest that is active and not retired; else the newest not
   * retired (a ring read just before a rotation took effect); else the newest.
   */
  public Key signing() {
    long now = System.currentTimeMillis();
    Key active = null;
    Key verifying = null;
    Key newest = null;
    for (Key k : keys) {
      if (newest == null || k.id() > newest.id()) {
        newest = k;
      }
      if (k.verifiesAt(now) && (verifying == null || k.id() > verifying.id())) {
        verifying = k;
      }
      if (k.verifiesAt(now) && k.activeFromMs() <= now && (active == null || k.id() > active.id())) {
        active = k;
      }
    }
    return active != null ? active : verifying != null ? verifying : newest;
  }

  public Optional<Key> byId(int id) {
    long now = System.currentTimeMillis();
    return keys.stream().filter(k -> k.id() == id && k.verifiesAt(now)).findFirst();
  }

  /** HMAC-SHA256 of {@code message} under the signing key's secret, hex: what Tidemark's SQL functions check. */
  public String sqlMac(String message) {
    return HexFormat.of().formatHex(hmac(signing().secret(), message.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * Whether {@code signed} is {@code <key id>.<hex HMAC-SHA256 of message>} under a key of this
   * ring that is not retired: what {@code tidemark.sign} writes.
   */
  public boolean sqlSignatureOk(String message, String signed) {
    int dot = signed == null ? -1 : signed.indexOf('.');
    if (dot <= 0) {
      return false;
    }
    int id;
    try {
      id = Integer.parseInt(signed.substring(0, dot));
    } catch (NumberFormatException e) {
      return false;
    }
    return byId(id).map(k -> java.security.MessageDigest.isEqual(
        HexFormat.of().formatHex(hmac(k.secret(), message.getBytes(StandardCharsets.UTF_8))).getBytes(StandardCharsets.US_ASCII),
        signed.substring(dot + 1).getBytes(StandardCharsets.US_ASCII))).orElse(false);
  }

  /** Encrypts and authenticates {@code plaintext} for {@code purpose}, bound to {@code boundTo} (a caller's id). */
  public String seal(String purpose, String boundTo, byte[] plaintext) {
    Key key = signing();
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    byte[] header = ByteBuffer.allocate(5).put(VERSION).putInt(key.id()).array();
    try {
      Cipher gcm = cipher(Cipher.ENCRYPT_MODE, key, purpose, iv);
      gcm.updateAAD(header);
      gcm.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = gcm.doFinal(plaintext);
      return B64.encodeToString(ByteBuffer.allocate(header.length + iv.length + sealed.length).put(header).put(iv).put(sealed).array());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The plaintext of a value {@link #seal} made for {@code purpose} and {@code boundTo}; empty for anything else. */
  public Optional<byte[]> open(String purpose, String boundTo, String token) {
    byte[] raw;
    try {
      raw = B64D.decode(token);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (raw.length < 5 + IV_BYTES + TAG_BITS / 8 || raw[0] != VERSION) {
      return Optional.empty();
    }
    ByteBuffer in = ByteBuffer.wrap(raw);
    in.get();
    Optional<Key> key = byId(in.getInt());
    if (key.isEmpty()) {
      return Optional.empty();
    }
    try {
      Cipher gcm = cipher(Cipher.DECRYPT_MODE, key.get(), purpose, java.util.Arrays.copyOfRange(raw, 5, 5 + IV_BYTES));
      gcm.updateAAD(raw, 0, 5);
      gcm.updateAAD(boundTo.getBytes(StandardCharsets.UTF_8));
      return Optional.of(gcm.doFinal(raw, 5 + IV_BYTES, raw.length - 5 - IV_BYTES));
    } catch (GeneralSecurityException e) {
      return Optional.empty();
    }
  }

  private static Cipher cipher(int mode, Key key, String purpose, byte[] iv) throws GeneralSecurityException {
    Cipher gcm = Cipher.getInstance("AES/GCM/NoPadding");
    gcm.init(mode, new SecretKeySpec(subkey(key, purpose), "AES"), new GCMParameterSpec(TAG_BITS, iv));
    return gcm;
  }

  /** HMAC-SHA256 of the first {@code length} bytes of {@code data} under {@code key}'s subkey for {@code purpose}. */
  public static byte[] mac(Key key, String purpose, byte[] data, int length) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(subkey(key, purpose), "HmacSHA256"));
      mac.update(data, 0, length);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A key per purpose, so that nothing sealed for one use opens for another; never equal to a SQL MAC's input. */
  static byte[] subkey(Key key, String purpose) {
    return hmac(key.secret(), ("tidemark/subkey/" + purpose).getBytes(StandardCharsets.UTF_8));
  }

  static byte[] hmac(byte[] secret, byte[] message) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret, "HmacSHA256"));
      return mac.doFinal(message);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
