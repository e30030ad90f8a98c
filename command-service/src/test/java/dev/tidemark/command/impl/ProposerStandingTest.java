package dev.tidemark.command.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.tidemark.config.TidemarkConfig.OAuthConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProposerStandingTest {

  private static final OAuthConfig NO_OAUTH = new OAuthConfig("", "", "", "", List.of(), 0, 0, 0);
  private static final OAuthConfig OAUTH = new OAuthConfig("https://issuer.example", "", "", "role", List.of("tidemark_writer"), 0, 0, 0);

  private static ProposerStanding token(boolean found, boolean revoked, boolean replaced, boolean expired, String role, String access,
      String... databases) {
    return new ProposerStanding("0b6f…", "tidemark_writer", found, revoked, replaced, expired, role, access, databases, true);
  }

  private static ProposerStanding valid() {
    return token(true, false, false, false, "tidemark_writer", "read-write", "*");
  }

  @Test
  void aValidReadWriteTokenOfTheSameRoleAndDatabaseStands() {
    assertNull(valid().voidReason("main", NO_OAUTH));
    assertNull(token(true, false, false, false, "tidemark_writer", "read-write", "sales", "main").voidReason("main", NO_OAUTH));
  }

  @Test
  void aTokenThatEndedOrChangedVoidsItsProposals() {
    assertEquals("its token was revoked", token(true, true, true, false, "tidemark_writer", "read-write", "*").voidReason("main", NO_OAUTH));
    assertEquals("its token expired", token(true, false, false, true, "tidemark_writer", "read-write", "*").voidReason("main", NO_OAUTH));
    assertEquals("its token was replaced by a new token of the same name",
        token(true, false, true, false, "tidemark_writer", "read-write", "*").voidReason("main", NO_OAUTH));
    assertEquals("its token no longer exists", token(false, false, false, false, null, null).voidReason("main", NO_OAUTH));
    assertEquals("its token now maps to another PostgreSQL role than tidemark_writer",
        token(true, false, false, false, "tidemark_reader", "read-write", "*").voidReason("main", NO_OAUTH));
    assertEquals("its token may now only read", token(true, false, false, false, "tidemark_writer", "read-only", "*").voidReason("main", NO_OAUTH));
    assertEquals("its token may no longer reach database main",
        token(true, false, false, false, "tidemark_writer", "read-write", "sales").voidReason("main", NO_OAUTH));
  }

  @Test
  void aDroppedRoleVoidsAnyProposal() {
    ProposerStanding dropped = new ProposerStanding("oauth:ada", "tidemark_writer", false, false, false, false, null, null, null, false);
    assertEquals("its PostgreSQL role tidemark_writer no longer exists", dropped.voidReason("main", OAUTH));
  }

  @Test
  void anOAuthCallerStandsWhileTheConfigStillAcceptsItsRole() {
    ProposerStanding oauth = new ProposerStanding("oauth:ada", "tidemark_writer", false, false, false, false, null, null, null, true);
    assertNull(oauth.voidReason("main", OAUTH));
    assertEquals("it signed in with an OAuth access token as role tidemark_writer, which auth.oauth.roles no longer lists",
        oauth.voidReason("main", new OAuthConfig("https://issuer.example", "", "", "role", List.of("other"), 0, 0, 0)));
    assertEquals("it signed in with an OAuth access token, and this database's config no longer accepts any (auth.oauth.issuer is empty)",
        oauth.voidReason("main", NO_OAUTH));
  }
}
