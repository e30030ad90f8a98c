package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConsoleConfigTest {

  private static String refusal(Map<ConfigKey, String> v) {
    return assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(v)).getMessage();
  }

  @Test
  void theConsoleIsOffByDefaultAtItsOwnPath() {
    TidemarkConfig c = TidemarkConfig.from(Map.of());
    assertFalse(c.console().enabled());
    assertEquals("/console", c.console().path());
    assertEquals(28_800, c.console().sessionSeconds());
    assertTrue(c.console().administrators().isEmpty());
  }

  @Test
  void approversDecideTheirDatabaseAndTableApproversOnlyProposalsWhoseEveryTableNamesThem() {
    Map<ConfigKey, String> v = new HashMap<>();
    v.put(ConfigKey.DATABASE_APPROVERS, "ops-admin, oauth:carol");
    v.put(ConfigKey.DATABASE_TABLE_APPROVERS, "public.salary:oauth:alice|payroll-lead, bonus:oauth:alice");
    TidemarkConfig.DatabaseConfig db = TidemarkConfig.from(v).database();
    assertEquals(Map.of("public.salary", List.of("oauth:alice", "payroll-lead"), "bonus", List.of("oauth:alice")), db.tableApprovers());
    assertTrue(db.mayDecide("ops-admin", List.of("public.anything")));
    assertTrue(db.mayDecide("oauth:carol", List.of()));
    assertTrue(db.mayDecide("oauth:alice", List.of("public.salary", "hr.bonus")));
    assertFalse(db.mayDecide("payroll-lead", List.of("public.salary", "hr.bonus")), "not every table names them");
    assertTrue(db.mayDecide("payroll-lead", List.of("public.salary")));
    assertFalse(db.mayDecide("oauth:alice", List.of()), "a proposal touching no table is the database approvers'");
    assertFalse(db.mayDecide("someone", List.of("public.salary")));
  }

  @Test
  void badConsoleSettingsAreRefusedByName() {
    assertTrue(refusal(Map.of(ConfigKey.DATABASE_TABLE_APPROVERS, "public.salary")).contains("database.table-approvers"));
    assertTrue(refusal(Map.of(ConfigKey.DATABASE_TABLE_APPROVERS, "a:x,a:y")).contains("each table once"));
    assertTrue(refusal(Map.of(ConfigKey.CONSOLE_PATH, "/mcp/console")).contains("console.path"));
    assertTrue(refusal(Map.of(ConfigKey.CONSOLE_PATH, "/mcp")).contains("console.path"));
    assertTrue(refusal(Map.of(ConfigKey.CONSOLE_ENABLED, "true", ConfigKey.DATABASE_POOL_SIZE, "1")).contains("at least 2"));
    Map<ConfigKey, String> oauth = new HashMap<>();
    oauth.put(ConfigKey.HTTP_PUBLIC_URL, "https://tidemark.example.com");
    oauth.put(ConfigKey.AUTH_OAUTH_ISSUER, "https://login.example.com");
    oauth.put(ConfigKey.AUTH_OAUTH_ROLES, "tidemark_reader");
    oauth.put(ConfigKey.CONSOLE_ENABLED, "true");
    assertTrue(refusal(oauth).contains("console.oauth-client-id"));
    oauth.put(ConfigKey.CONSOLE_OAUTH_CLIENT_ID, "tidemark-console");
    assertEquals("tidemark-console", TidemarkConfig.from(oauth).console().oauthClientId());
  }
}
