package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class LoopbackTest {

  @Test
  void loopbackIsExactlyLocalhostTheIpv4LoopbackBlockAndIpv6One() {
    for (String host : List.of("localhost", "LOCALHOST", "127.0.0.1", "127.255.255.254", "127.1.2.3", "127.0.0.0", "::1", "[::1]")) {
      assertTrue(TidemarkConfig.isLoopback(host), host);
    }
  }

  @Test
  void namesThatMerelyStartLikeALoopbackAddressAreNotLoopback() {
    for (String host : List.of("127.0.0.1.evil.example", "127.0.0.1.nip.io", "127.evil.example", "127.", "127.0.0", "127.0.0.1.",
        "127.0.0.1.1", "127.0.0.256", "127.0.0.-1", "127.0.0.+1", "127.0.0.1a", "127.0.0.01", "0177.0.0.1", "0x7f.0.0.1",
        "2130706433", "128.0.0.1", "10.0.0.1", "0.0.0.0", "localhost.", "localhost.evil.example", "evil-localhost",
        "[::1].evil.example", "::1.evil.example", "::2", "[::2]", "::ffff:127.0.0.1", "", " 127.0.0.1", "127.0.0.1 ",
        "127.0.0.1:8080", "\u0661\u0662\u0667.0.0.1")) {
      assertFalse(TidemarkConfig.isLoopback(host), host);
    }
    assertFalse(TidemarkConfig.isLoopback(null));
  }

  @Test
  void credentialsCannotBeTurnedOffOnAHostThatOnlyLooksLikeLoopback() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.AUTH_ENABLED, "false", ConfigKey.HTTP_HOST, "127.0.0.1.nip.io")));
    assertTrue(e.getMessage().contains("auth.enabled"), e.getMessage());
    assertEquals(false, TidemarkConfig.from(Map.of(ConfigKey.AUTH_ENABLED, "false", ConfigKey.HTTP_HOST, "::1")).authEnabled());
  }
}
