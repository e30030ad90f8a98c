package dev.tidemark.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

class KeyRingTest {

  static KeyRing.Key key(int id, long activeFrom, long retiresAt) {
    byte[] secret = new byte[32];
    java.util.Arrays.fill(secret, (byte) id);
    return new KeyRing.Key(id, secret, activeFrom, retiresAt);
  }

  /** A ring with one key, active since the epoch and never retired. */
  public static KeyRing ring(int id) {
    return new KeyRing(List.of(key(id, 0, Long.MAX_VALUE)));
  }

  private static final byte[] TEXT = "{\"email\":\"customer7@example.com\"}".getBytes(StandardCharsets.UTF_8);

  @Test
  void aSealedValueOpensForItsPurposeAndCallerOnly() {
    KeyRing ring = ring(1);
    String sealed = ring.seal("cursor", "caller-a", TEXT);
    assertArrayEquals(TEXT, ring.open("cursor", "caller-a", sealed).orElseThrow());
    assertTrue(ring.open("cursor", "caller-b", sealed).isEmpty(), "another caller's cursor");
    assertTrue(ring.open("plan", "caller-a", sealed).isEmpty(), "another purpose");
    assertTrue(ring(2).open("cursor", "caller-a", sealed).isEmpty(), "another cluster's key");
  }

  @Test
  void aSealedValueShowsNothingOfWhatItHolds() {
    String sealed = ring(1).seal("cursor", "caller-a", TEXT);
    String decoded = new String(Base64.getUrlDecoder().decode(sealed), StandardCharsets.ISO_8859_1);
    assertFalse(decoded.contains("customer7"), "the payload is encrypted, not only encoded");
    assertNotEquals(sealed, ring(1).seal("cursor", "caller-a", TEXT), "a fresh nonce every time");
  }

  @Test
  void anAlteredValueDoesNotOpen() {
    KeyRing ring = ring(1);
    String sealed = ring.seal("cursor", "caller-a", TEXT);
    byte[] raw = Base64.getUrlDecoder().decode(sealed);
    raw[raw.length - 20] ^= 1;
    assertTrue(ring.open("cursor", "caller-a", Base64.getUrlEncoder().withoutPadding().encodeToString(raw)).isEmpty());
    assertTrue(ring.open("cursor", "caller-a", "not base64 !").isEmpty());
    assertTrue(ring.open("cursor", "caller-a", "").isEmpty());
  }

  @Test
  void aRotatedRingSignsWithTheNewKeyAndStillOpensWhatTheOldOneSealed() {
    long now = System.currentTimeMillis();
    KeyRing before = ring(1);
    String old = before.seal("plan", "", TEXT);
    KeyRing rotated = new KeyRing(List.of(key(1, 0, now + 60_000), key(2, now - 1, Long.MAX_VALUE)));
    assertEquals(2, rotated.signing().id());
    assertArrayEquals(TEXT, rotated.open("plan", "", old).orElseThrow(), "within the grace period");
    KeyRing retired = new KeyRing(List.of(key(1, 0, now - 1), key(2, now - 1, Long.MAX_VALUE)));
    assertTrue(retired.open("plan", "", old).isEmpty(), "after the grace period");
  }

  @Test
  void aKeyNotYetActiveVerifiesButDoesNotSign() {
    long now = System.currentTimeMillis();
    KeyRing ring = new KeyRing(List.of(key(1, 0, Long.MAX_VALUE), key(2, now + 60_000, Long.MAX_VALUE)));
    assertEquals(1, ring.signing().id(), "every node must know a key before any signs with it");
    String byTwo = new KeyRing(List.of(key(2, 0, Long.MAX_VALUE))).seal("cursor", "c", TEXT);
    assertArrayEquals(TEXT, ring.open("cursor", "c", byTwo).orElseThrow());
  }

  @Test
  void theSqlMacIsHmacSha256OfTheSigningKey() throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(key(1, 0, 0).secret(), "HmacSHA256"));
    String expected = java.util.HexFormat.of().formatHex(mac.doFinal("changes|42".getBytes(StandardCharsets.UTF_8)));
    assertEquals(expected, ring(1).sqlMac("changes|42"));
  }
}
