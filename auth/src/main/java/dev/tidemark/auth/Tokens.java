package dev.tidemark.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/** Bearer tokens: generated with 238 bits of randomness, stored only as a SHA-256 hash. */
public final class Tokens {

  /** Every Tidemark token starts with this, so that secret scanners can recognise one. */
  public static final String PREFIX = "tmk_";

  private static final char[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  private Tokens() {}

  public static String generate() {
    StringBuilder sb = new StringBuilder(PREFIX);
    for (int i = 0; i < 40; i++) {
      sb.append(ALPHABET[RANDOM.nextInt(ALPHABET.length)]);
    }
    return sb.toString();
  }

  /** A hash is enough (no salt or stretching): tokens are long random strings, not passwords. */
  public static String hash(String token) {
    // every request hashes its token; looking the algorithm up each time cost more than hashing
    byte[] digest = SHA256.get().digest(token.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(digest);
  }

  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  });

  /** A token as a user may pass it on the command line; refuses what could never be valid. */
  public static String requireWellFormed(String token) {
    if (token == null || token.length() < 16 || token.length() > 256 || !token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
      throw new IllegalArgumentException("a token must be 16 to 256 visible ASCII characters");
    }
    return token;
  }
}
