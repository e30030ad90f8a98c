package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TidemarkConfigTest {

  @Test
  void everyDefaultParses() {
    TidemarkConfig c = TidemarkConfig.from(Map.of());
    assertEquals(10_000, c.busSendTimeoutMs());
    assertEquals("tidemark.changelog.main", c.kafka().topicFor(c.database().name()));
  }

  @Test
  void aCallersShareIsThePercentOfEachInstancesPoolRoundedDownAndAtLeastOneConnection() {
    TidemarkConfig c = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_POOL_SIZE, "8"));
    assertEquals(4, c.database().perCaller(), "half of 8 by default");
    assertEquals(2, c.forInstance(0, 2).database().perCaller(), "half of each instance's 4");
    assertEquals(1, c.forInstance(2, 3).database().perCaller(), "half of 2");
    assertEquals(1, c.database().withPoolSize(1).perCaller(), "a pool of one is one caller's whole");
    TidemarkConfig all = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_POOL_SIZE, "8", ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "100"));
    assertEquals(8, all.database().perCaller());
    TidemarkConfig least = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_POOL_SIZE, "8", ConfigKey.DATABASE_CALLER_SHARE_PERCENT, "1"));
    assertEquals(1, least.database().perCaller());
    for (String bad : new String[] {"0", "101", "half"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TidemarkConfig.from(Map.of(ConfigKey.DATABASE_CALLER_SHARE_PERCENT, bad)));
      assertTrue(e.getMessage().contains("database.caller-share-percent"), e.getMessage());
    }
  }

  @Test
  void aRoleRunsOneInstancePerEventLoopAtMostPoolSizeAndTheInstancesShareThePoolSize() {
    TidemarkConfig c = TidemarkConfig.from(Map.of(ConfigKey.NODE_EVENT_LOOPS, "3", ConfigKey.DATABASE_POOL_SIZE, "8"));
    assertEquals(2, c.cluster().instances(c.cluster().queryInstances(), c.database().poolSize()), "4 connections each at least");
    TidemarkConfig wide = TidemarkConfig.from(Map.of(ConfigKey.NODE_EVENT_LOOPS, "3", ConfigKey.DATABASE_POOL_SIZE, "16"));
    assertEquals(3, wide.cluster().instances(wide.cluster().queryInstances(), wide.database().poolSize()), "one per event loop");
    TidemarkConfig small = TidemarkConfig.from(Map.of(ConfigKey.NODE_EVENT_LOOPS, "3", ConfigKey.DATABASE_POOL_SIZE, "3"));
    assertEquals(1, small.cluster().instances(small.cluster().commandInstances(), small.database().poolSize()));
    TidemarkConfig four = TidemarkConfig.from(Map.of(ConfigKey.NODE_COMMAND_INSTANCES, "4", ConfigKey.DATABASE_POOL_SIZE, "2"));
    assertEquals(2, four.cluster().instances(four.cluster().commandInstances(), four.database().poolSize()), "never more than pool-size");
    // 8 connections over 3 instances: 3, 3 and 2, together what one instance would open
    assertEquals(java.util.List.of(3, 3, 2), java.util.stream.IntStream.range(0, 3).mapToObj(i -> c.forInstance(i, 3).database().poolSize()).toList());
    assertEquals(c, c.forInstance(0, 1));
    assertEquals(c.database().withPoolSize(3), c.forInstance(0, 3).database());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.NODE_QUERY_INSTANCES, "-1")));
    assertTrue(e.getMessage().contains("node.query-instances"), e.getMessage());
  }

  @Test
  void theGatewayRunsOneInstancePerEventLoopWhateverThePoolSizeUnlessToldHowMany() {
    TidemarkConfig c = TidemarkConfig.from(Map.of(ConfigKey.NODE_EVENT_LOOPS, "3", ConfigKey.DATABASE_POOL_SIZE, "2"));
    assertEquals(3, c.cluster().gatewayInstanceCount(), "an endpoint instance holds no connection of the pool");
    TidemarkConfig one = TidemarkConfig.from(Map.of(ConfigKey.NODE_EVENT_LOOPS, "3", ConfigKey.NODE_GATEWAY_INSTANCES, "1"));
    assertEquals(1, one.cluster().gatewayInstanceCount());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.NODE_GATEWAY_INSTANCES, "-1")));
    assertTrue(e.getMessage().contains("node.gateway-instances"), e.getMessage());
  }

  @Test
  void tracingExportsNothingByDefaultAndRefusesWhatItCannotUse() {
    TidemarkConfig.TracingConfig defaults = TidemarkConfig.from(Map.of()).tracing();
    assertEquals(new TidemarkConfig.TracingConfig("", 1.0, "tidemark"), defaults);
    assertEquals(false, defaults.exports());
    TidemarkConfig.TracingConfig set = TidemarkConfig.from(Map.of(ConfigKey.TRACING_OTLP_ENDPOINT, "http://collector:4318/v1/traces",
        ConfigKey.TRACING_SAMPLE_RATIO, "0.25", ConfigKey.TRACING_SERVICE_NAME, "tidemark-eu")).tracing();
    assertEquals(new TidemarkConfig.TracingConfig("http://collector:4318/v1/traces", 0.25, "tidemark-eu"), set);
    assertTrue(set.exports());
    for (var bad : Map.of(
        ConfigKey.TRACING_OTLP_ENDPOINT, "collector:4318",
        ConfigKey.TRACING_SAMPLE_RATIO, "1.5",
        ConfigKey.TRACING_SERVICE_NAME, " ").entrySet()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(bad.getKey(), bad.getValue())));
      assertTrue(e.getMessage().contains(bad.getKey().key()), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(ConfigKey.TRACING_SAMPLE_RATIO, "half")));
    assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(ConfigKey.TRACING_OTLP_ENDPOINT, "ftp://collector/v1/traces")));
  }

  @Test
  void tasksAreKeptAnHourByDefaultAndNeverForLongerThanTheirMaximum() {
    assertEquals(new TidemarkConfig.TasksConfig(3_600_000, 604_800_000, 1000, 1000), TidemarkConfig.from(Map.of()).tasks());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.TASKS_TTL_MS, "90000", ConfigKey.TASKS_MAX_TTL_MS, "60000")));
    assertTrue(e.getMessage().contains("tasks.ttl-ms") && e.getMessage().contains("tasks.max-ttl-ms"), e.getMessage());
  }

  @Test
  void keysAndEnvironmentNamesAreUnique() {
    Set<String> keys = new HashSet<>();
    Set<String> envs = new HashSet<>();
    for (ConfigKey k : ConfigKey.values()) {
      assertTrue(keys.add(k.key()), k.key());
      assertTrue(envs.add(k.envName()), k.envName());
      assertTrue(k.envName().matches("TIDEMARK_[A-Z0-9_]+"), k.envName());
      assertTrue(!k.doc().isBlank(), k.key());
    }
    assertEquals("TIDEMARK_HTTP_MAX_BODY_BYTES", ConfigKey.HTTP_MAX_BODY_BYTES.envName());
  }

  @Test
  void credentialsMayOnlyBeTurnedOffOnALoopbackAddress() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.AUTH_ENABLED, "false")));
    assertTrue(e.getMessage().contains("auth.enabled"), e.getMessage());
    assertEquals(false, TidemarkConfig.from(Map.of(ConfigKey.AUTH_ENABLED, "false", ConfigKey.HTTP_HOST, "127.0.0.1")).authEnabled());
  }

  @Test
  void reviewedFunctionsAreSchemaQualifiedNamesOrWholeSchemas() {
    assertEquals(java.util.List.of(), TidemarkConfig.from(Map.of()).database().reviewedFunctions());
    assertEquals(java.util.List.of("public.touch_updated_at", "audit.*"), TidemarkConfig.from(
        Map.of(ConfigKey.DATABASE_REVIEWED_FUNCTIONS, " public.touch_updated_at , audit.* ")).database().reviewedFunctions());
    for (String bad : new String[] {"touch_updated_at", "public.", ".f", "a.b.c", "public.f(int)", "public.f g"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TidemarkConfig.from(Map.of(ConfigKey.DATABASE_REVIEWED_FUNCTIONS, bad)));
      assertTrue(e.getMessage().contains("database.reviewed-functions") && e.getMessage().contains("schema.name"), e.getMessage());
    }
  }

  @Test
  void theChangelogsDatabaseIsTheServedOneUnlessAnotherIsNamed() {
    TidemarkConfig.DatabaseConfig served = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_URL, "postgresql://db:5432/app")).database();
    assertFalse(served.separateChangelog());
    assertEquals("db:5432/app", served.changelogDatabase().host() + ":" + served.changelogDatabase().port() + "/"
        + served.changelogDatabase().dbname());
    TidemarkConfig.DatabaseConfig apart = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_URL, "postgresql://db:5432/app",
        ConfigKey.DATABASE_CHANGELOG_URL, "postgresql://log-db/tidemark_log")).database();
    assertTrue(apart.separateChangelog());
    assertEquals("log-db:5432/tidemark_log", apart.changelogDatabase().host() + ":" + apart.changelogDatabase().port() + "/"
        + apart.changelogDatabase().dbname());
    assertEquals(apart.user(), apart.changelogDatabase().user(), "the same login");
    IllegalArgumentException same = assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(
        ConfigKey.DATABASE_URL, "postgresql://db:5432/app", ConfigKey.DATABASE_CHANGELOG_URL, "postgresql://db/app")));
    assertTrue(same.getMessage().contains("database.changelog-url") && same.getMessage().contains("leave it empty"), same.getMessage());
    IllegalArgumentException login = assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(
        ConfigKey.DATABASE_CHANGELOG_URL, "postgresql://me:secret@log-db/log")));
    assertTrue(login.getMessage().contains("database.changelog-url") && !login.getMessage().contains("secret"), login.getMessage());
  }

  @Test
  void keyOnlyTablesAreTablesSchemasOrEverything() {
    assertEquals(java.util.List.of(), TidemarkConfig.from(Map.of()).database().keyOnlyTables());
    assertEquals(java.util.List.of("public.audit_log", "clicks", "events.*", "*"), TidemarkConfig.from(
        Map.of(ConfigKey.DATABASE_KEY_ONLY_TABLES, " public.audit_log , clicks,events.*,* ")).database().keyOnlyTables());
    for (String bad : new String[] {"public.", ".audit_log", "a.b.c", "public.audit*", "pub*.x", "\"Audit\"", "audit log"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TidemarkConfig.from(Map.of(ConfigKey.DATABASE_KEY_ONLY_TABLES, bad)));
      assertTrue(e.getMessage().contains("database.key-only-tables") && e.getMessage().contains("schema.*")
          && e.getMessage().contains(bad), e.getMessage());
    }
  }

  @Test
  void unplannedTablesAreWrittenAsKeyOnlyTablesAndAnEntryOfDatabasesMaySetItsOwn() {
    assertEquals(java.util.List.of(), TidemarkConfig.from(Map.of()).database().unplannedTables());
    assertEquals(java.util.List.of("public.audit_log", "events.*"), TidemarkConfig.from(
        Map.of(ConfigKey.DATABASE_UNPLANNED_TABLES, "public.audit_log, events.*")).database().unplannedTables());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TidemarkConfig.from(Map.of(ConfigKey.DATABASE_UNPLANNED_TABLES, "public.audit*")));
    assertTrue(e.getMessage().contains("database.unplanned-tables") && e.getMessage().contains("public.audit*"), e.getMessage());
    TidemarkConfig two = TidemarkConfig.from(Map.of(ConfigKey.DATABASE_UNPLANNED_TABLES, "clicks",
        ConfigKey.DATABASES, "[{\"name\": \"sales\", \"url\": \"postgresql://127.0.0.1:5432/sales\", \"unplanned-tables\": \"orders_log\"}]"));
    assertEquals(java.util.List.of("clicks"), two.database().unplannedTables());
    assertEquals(java.util.List.of("orders_log"), two.databases().stream().filter(d -> d.name().equals("sales")).findFirst()
        .orElseThrow().unplannedTables());
  }

  @Test
  void invalidValuesNameTheirKey() {
    for (var bad : Map.of(
        ConfigKey.HTTP_PORT, "70000",
        ConfigKey.HTTP_PATH, "mcp",
        ConfigKey.DATABASE_NAME, "Main DB",
        ConfigKey.DATABASE_POOL_SIZE, "0",
        ConfigKey.AUTH_ENABLED, "yes").entrySet()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TidemarkConfig.from(Map.of(bad.getKey(), bad.getValue())));
      assertTrue(e.getMessage().contains(bad.getKey().key()), e.getMessage());
    }
  }
}
