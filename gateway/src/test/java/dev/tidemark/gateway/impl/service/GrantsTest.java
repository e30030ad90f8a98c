package dev.tidemark.gateway.impl.service;

import dev.tidemark.gateway.impl.service.Grants;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.contract.Access;
import dev.tidemark.contract.Caller;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GrantsTest {

  private static final List<String> TOOLS = List.of("status", "query", "get_row", "insert_rows");
  private final Grants grants = new Grants(Map.of("reader", List.of("status", "query"), "writer", List.of("*")), TOOLS);

  private static Caller token(String role, Access access) {
    return new Caller("c", "c", role, access, List.of("*"));
  }

  private static Caller oauth(String role, String... scopes) {
    return new Caller("oauth:s", "oauth:s", role, Access.READ_ONLY, List.of("*"), List.of(scopes));
  }

  @Test
  void aToolOutsideTheRolesCeilingIsUnknownWhateverTheScopes() {
    assertEquals(Grants.Verdict.UNKNOWN, grants.verdict(oauth("reader", "tidemark:read", "tidemark:write"), "get_row"));
    assertEquals(Grants.Verdict.UNKNOWN, grants.verdict(token("reader", Access.READ_WRITE), "insert_rows"));
    assertEquals(Grants.Verdict.CALL, grants.verdict(token("reader", Access.READ_ONLY), "query"));
  }

  @Test
  void aRoleWithoutACeilingOrWithAStarMayCallEveryTool() {
    assertEquals(Grants.Verdict.CALL, grants.verdict(token("writer", Access.READ_WRITE), "insert_rows"));
    assertEquals(Grants.Verdict.CALL, grants.verdict(token("other", Access.READ_WRITE), "get_row"));
  }

  @Test
  void aReadOnlyTokenNeverSeesTheChangeToolsButAScopeLessOAuthTokenMayStepUp() {
    assertEquals(Grants.Verdict.UNKNOWN, grants.verdict(token("writer", Access.READ_ONLY), "insert_rows"));
    assertEquals(Grants.Verdict.NEEDS_SCOPE, grants.verdict(oauth("writer", "tidemark:read"), "insert_rows"));
    assertEquals(Grants.Verdict.NEEDS_SCOPE, grants.verdict(oauth("writer"), "query"));
    assertEquals(Grants.Verdict.CALL, grants.verdict(oauth("writer", "tidemark:write"), "insert_rows"));
    assertEquals("tidemark:write", Grants.scopeOf("insert_rows"));
    assertEquals("tidemark:read", Grants.scopeOf("an_extension_tool"));
  }

  @Test
  void migrateIsUnknownToEveryRoleOutsideTheMigrateRolesWhateverTheCeiling() {
    Grants migrating = new Grants(Map.of("writer", List.of("*")), List.of("status", "migrate"), List.of("owner"));
    assertEquals(Grants.Verdict.UNKNOWN, migrating.verdict(token("writer", Access.READ_WRITE), "migrate"));
    assertEquals(Grants.Verdict.UNKNOWN, migrating.verdict(token("other", Access.READ_WRITE), "migrate"));
    assertEquals(Grants.Verdict.CALL, migrating.verdict(token("owner", Access.READ_WRITE), "migrate"));
    assertEquals(Grants.Verdict.UNKNOWN, migrating.verdict(token("owner", Access.READ_ONLY), "migrate"), "a read-only token never migrates");
    assertEquals(Grants.Verdict.UNKNOWN, grants.verdict(token("writer", Access.READ_WRITE), "migrate"), "nobody migrates by default");
  }

  @Test
  void aCeilingNamingAToolTheServerLacksStopsTheStartNamingIt() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new Grants(Map.of("reader", List.of("qurey")), TOOLS));
    assertTrue(e.getMessage().contains("auth.role-tools") && e.getMessage().contains("[qurey]"), e.getMessage());
  }
}
