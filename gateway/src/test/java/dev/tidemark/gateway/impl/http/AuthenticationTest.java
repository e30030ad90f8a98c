package dev.tidemark.gateway.impl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.auth.AuthenticationException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AuthenticationTest {

  @Test
  void aRefusedCredentialIsA401ThatChallengesAndLetsTheConnectionGo() {
    Refusal r = Authentication.refusal(new AuthenticationException("The bearer token is not valid."));
    assertEquals(401, r.answer().status());
    assertEquals(List.of("WWW-Authenticate", "connection"), List.copyOf(r.answer().headers().keySet()));
    assertEquals("Bearer realm=\"tidemark\", error=\"invalid_token\"", r.answer().headers().get("WWW-Authenticate"));
    assertEquals("close", r.answer().headers().get("connection"));
    assertEquals("The bearer token is not valid.", r.answer().body().getJsonObject("error").getString("message"));
  }

  @Test
  void aCheckThatCouldNotBeMadeIsA503WithoutAChallenge() {
    Refusal r = Authentication.refusal(new IllegalStateException("database down"));
    assertEquals(503, r.answer().status());
    assertEquals(Map.of(), r.answer().headers());
    assertEquals("Credentials could not be checked right now; retry shortly.", r.answer().body().getJsonObject("error").getString("message"));
  }
}
