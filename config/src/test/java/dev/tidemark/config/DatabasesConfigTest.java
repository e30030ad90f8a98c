package dev.tidemark.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatabasesConfigTest {

  @TempDir
  Path dir;

  private TidemarkConfig load(String yaml, Map<String, String> env) throws Exception {
    Path f = dir.resolve("tidemark.yaml");
    Files.writeString(f, yaml);
    return ConfigLoader.load(f, env, Map.of());
  }

  private String refusal(String yaml) {
    return assertThrows(IllegalArgumentException.class, () -> load(yaml, Map.of())).getMessage();
  }

  @Test
  void withoutTheListTheClusterServesTheOneDefaultDatabase() {
    TidemarkConfig c = ConfigLoader.load(null, Map.of(), Map.of());
    assertEquals(List.of("main"), c.databaseNames());
    assertEquals(c.database(), c.defaultDatabase());
  }

  @Test
  void eachEntryOverridesDatabaseKeysAndTakesTheRestFromDatabase() throws Exception {
    TidemarkConfig c = load("""
        database: {name: main, url: postgresql://db:5432/app, user: tidemark, password: pw, pool-size: 3, schemas: [public, app]}
        databases:
          - name: sales
            url: postgresql://db2:6543/sales
            caller-passwords: "tidemark_reader:r"
            schemas: [public, orders]
          - {name: hr, url: postgresql://db:5432/hr, pool-size: 9}
        """, Map.of());
    assertEquals(List.of("main", "sales", "hr"), c.databaseNames());
    TidemarkConfig.DatabaseConfig sales = c.forDatabase("sales").database();
    assertEquals("db2", sales.host());
    assertEquals(6543, sales.port());
    assertEquals("sales", sales.dbname());
    assertEquals(List.of("public", "orders"), sales.schemas());
    assertEquals(Map.of("tidemark_reader", "r"), sales.callerPasswords());
    assertEquals("tidemark", sales.user(), "inherited");
    assertEquals("pw", sales.password(), "inherited");
    assertEquals(3, sales.poolSize(), "inherited");
    TidemarkConfig hr = c.forDatabase("hr");
    assertEquals(9, hr.database().poolSize());
    assertEquals(List.of("public", "app"), hr.database().schemas());
    assertEquals("main", hr.defaultDatabase().name(), "a database's view still knows the default");
    assertEquals("main", c.database().name());
  }

  @Test
  void anEntryMayReadItsPasswordFromAFile() throws Exception {
    Path secret = dir.resolve("sales-pw");
    Files.writeString(secret, "from-file\n");
    TidemarkConfig c = load("""
        database: {url: postgresql://db:5432/app, password: pw}
        databases:
          - {name: sales, url: postgresql://db:5432/sales, password-file: %s}
        """.formatted(secret), Map.of());
    assertEquals("from-file", c.forDatabase("sales").database().password());
    assertEquals("pw", c.database().password());
  }

  @Test
  void theEnvironmentSetsTheListAsJson() throws Exception {
    TidemarkConfig c = load("database.url: postgresql://db:5432/app\n",
        Map.of("TIDEMARK_DATABASES", "[{\"name\":\"sales\",\"url\":\"postgresql://db:5432/sales\",\"pool-size\":2}]"));
    assertEquals(List.of("main", "sales"), c.databaseNames());
    assertEquals(2, c.forDatabase("sales").database().poolSize());
    String bad = assertThrows(IllegalArgumentException.class, () -> load("", Map.of("TIDEMARK_DATABASES", "sales"))).getMessage();
    assertTrue(bad.contains("TIDEMARK_DATABASES") && bad.contains("JSON array"), bad);
  }

  @Test
  void aLoginInTheUrlIsRefusedNamingTheKeysThatTakeIt() {
    String m = assertThrows(IllegalArgumentException.class,
        () -> load("", Map.of("TIDEMARK_DATABASE_URL", "postgresql://postgres:secret@db:5432/app"))).getMessage();
    assertTrue(m.contains("database.user") && m.contains("database.password-file") && !m.contains("secret"), m);
  }

  @Test
  void anUnknownKeyInAnEntryIsRefusedWithTheKeysAnEntryMaySet() {
    String m = refusal("""
        databases:
          - {name: sales, url: postgresql://db:5432/sales, pool_size: 2}
        """);
    assertTrue(m.contains("databases[0]") && m.contains("'pool_size'") && m.contains("pool-size") && m.contains("caller-passwords"), m);
    assertTrue(refusal("databases:\n  - {name: sales, url: postgresql://db:5432/sales, http: {port: 1}}\n").contains("unknown key 'http'"));
  }

  @Test
  void entriesNeedANameAndAUrlOfTheirOwn() {
    assertTrue(refusal("databases:\n  - {url: postgresql://db:5432/sales}\n").contains("must set name and url"));
    assertTrue(refusal("databases:\n  - {name: sales}\n").contains("must set name and url"));
    assertTrue(refusal("databases:\n  - sales\n").contains("databases[0] must be a mapping"));
    assertTrue(refusal("databases: sales\n").contains("databases (TIDEMARK_DATABASES) must be a list"));
  }

  @Test
  void namesAndPostgresqlDatabasesMayNotRepeat() {
    String sameName = refusal("""
        database: {name: main, url: postgresql://db:5432/app}
        databases:
          - {name: main, url: postgresql://db:5432/other}
        """);
    assertTrue(sameName.contains("main is named twice"), sameName);
    String sameDb = refusal("""
        database: {url: postgresql://db:5432/app}
        databases:
          - {name: sales, url: postgresql://db/app}
        """);
    assertTrue(sameDb.contains("sales and main are both db:5432/app"), sameDb);
    String sameStore = refusal("""
        database: {url: postgresql://db:5432/app, changelog-url: postgresql://log:5432/changes}
        databases:
          - {name: sales, url: postgresql://db/sales, changelog-url: postgresql://log/changes}
        """);
    assertTrue(sameStore.contains("sales and main both store theirs in log:5432/changes"), sameStore);
  }

  @Test
  void aBadValueInAnEntryNamesTheEntryAndItsKey() {
    String name = refusal("databases:\n  - {name: Sales!, url: postgresql://db:5432/sales}\n");
    assertTrue(name.contains("config key databases[0] (Sales!) name must be a lower-case name"), name);
    String pool = refusal("databases:\n  - {name: sales, url: postgresql://db:5432/sales, pool-size: 0}\n");
    assertTrue(pool.contains("databases[0] (sales) pool-size must be a number above 0"), pool);
    String url = refusal("databases:\n  - {name: sales, url: mysql://db/sales}\n");
    assertTrue(url.contains("databases[0] (sales) url must be a URL"), url);
    String nested = refusal("databases:\n  - {name: sales, url: postgresql://db:5432/sales, schemas: [{a: 1}]}\n");
    assertTrue(nested.contains("databases[0].schemas must be a list of plain values"), nested);
  }

  @Test
  void anUnknownDatabaseHasNoView() {
    String m = assertThrows(IllegalArgumentException.class, () -> ConfigLoader.load(null, Map.of(), Map.of()).forDatabase("sales"))
        .getMessage();
    assertTrue(m.contains("[main]"), m);
  }
}
