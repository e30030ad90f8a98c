package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class LoopbackHeadersTest {

  @Test
  void aLoopbackOriginIsASchemeALoopbackHostAndMaybeAPortNothingMore() {
    for (String origin : List.of("http://127.0.0.1", "http://127.0.0.1:6274", "https://localhost", "http://localhost:3000",
        "http://[::1]:8080", "http://127.9.9.9")) {
      assertTrue(RequestGuards.originIsLoopback(origin), origin);
    }
    for (String origin : List.of("http://127.0.0.1.evil.example", "http://127.0.0.1.nip.io:8080", "http://localhost.evil.example",
        "http://127.0.0.1@evil.example", "http://evil.example#@127.0.0.1", "http://evil.example/127.0.0.1", "ftp://127.0.0.1",
        "http://127.0.0.1/path", "http://user@127.0.0.1", "null", "", "http://0x7f000001", "http://2130706433", "http://[::2]",
        "file://localhost", "http://127.0.0.1?x=1", "http://127.0.0.1.")) {
      assertFalse(RequestGuards.originIsLoopback(origin), origin);
    }
  }

  @Test
  void aLoopbackHostHeaderIsALoopbackNameOrLiteralWithAtMostAPort() {
    for (String host : List.of("127.0.0.1", "127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]", "[::1]:8080", "127.3.2.1:1")) {
      assertTrue(RequestGuards.hostIsLoopback(host), host);
    }
    for (String host : List.of("127.0.0.1.nip.io", "127.0.0.1.nip.io:8080", "127.0.0.1.evil.example", "localhost.evil.example",
        "[::1].evil.example", "[::1]evil", "[::1", "127.0.0.1:80:80", "127.0.0.1:", "127.0.0.1:http", "evil.example:8080",
        "127.0.0.1 evil.example", "", "::1", "0.0.0.0:8080")) {
      assertFalse(RequestGuards.hostIsLoopback(host), host);
    }
  }
}
