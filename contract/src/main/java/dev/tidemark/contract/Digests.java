package dev.tidemark.contract;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The digest Tidemark's fingerprints and signed messages are made with (a named tool's
 * definition, the named tools of a database, what Tidemark's SQL functions check): nodes compare
 * them with each other and with what PostgreSQL computes, so every node must make them the same way.
 */
public final class Digests {

  private Digests() {}

  /**
   * SHA-256 of {@code text} in UTF-8 (null as empty), in lower-case hex: what the SQL side computes
   * as {@code encode(sha256(convert_to(t, 'UTF8')), 'hex')}.
   */
  public static String sha256Hex(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest((text == null ? "" : text).getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
