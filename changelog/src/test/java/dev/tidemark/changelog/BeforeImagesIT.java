package dev.tidemark.changelog;

import static dev.tidemark.testsupport.TestDatabases.sql;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.tidemark.config.ConfigKey;
import dev.tidemark.database.schema.CaptureSetup;
import dev.tidemark.testsupport.Await;
import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.ServiceHarness;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Full before-images by choice (database.key-only-tables): what an UPDATE and a DELETE of a table
 * carry under each replica identity, end to end from the served table through the slot into the
 * changelog, a table without a primary key that keeps its full images, what status reports, and a
 * change of the choice that the next reconcile applies, to tables made later too.
 */
@ExtendWith(InfraExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BeforeImagesIT {

  static final String DB = "before_images_it";
  static final String NAME = "beforeimages";

  private SharedInfra infra;
  private ServiceHarness relay;

  @BeforeAll
  void start(SharedInfra shared) {
    this.infra = shared;
    ServiceHarness.prepareDatabase(infra, DB);
    sql(infra, DB, "DROP TABLE IF EXISTS public.whole, public.keyed, public.nokey",
        "CREATE TABLE public.whole (id int PRIMARY KEY, v int NOT NULL, note text)",
        "CREATE TABLE public.keyed (id int PRIMARY KEY, v int NOT NULL, note text)",
        "CREATE TABLE public.nokey (v int NOT NULL, note text)");
    relay = ChangelogRole.start(infra, DB, NAME, Map.of(ConfigKey.DATABASE_KEY_ONLY_TABLES, "public.keyed,nokey",
        ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1"));
  }

  @AfterAll
  void stop() {
    if (relay != null) {
      relay.close();
    }
  }

  @Test
  @Order(1)
  void keyOnlyTablesGetTheDefaultIdentityAndATableWithoutAKeyKeepsFull() {
    assertEquals(List.of("f", "d", "f"), List.of(identity("whole"), identity("keyed"), identity("nokey")));
    assertEquals(List.of("public.keyed=key", "public.nokey=full", "public.whole=full"), beforeImages());
  }

  @Test
  @Order(2)
  void anUpdateAndADeleteCarryTheWholeOldRowOrItsKeyAloneAsChosen() {
    for (String t : List.of("whole", "keyed")) {
      sql(infra, DB, "INSERT INTO public." + t + " VALUES (1, 1, 'one'), (2, 2, 'two'), (3, 3, 'three')",
          "UPDATE public." + t + " SET v = 10 WHERE id = 1",
          "UPDATE public." + t + " SET id = 20 WHERE id = 2",
          "DELETE FROM public." + t + " WHERE id = 3");
    }
    sql(infra, DB, "INSERT INTO public.nokey VALUES (1, 'one')", "UPDATE public.nokey SET v = 10", "DELETE FROM public.nokey");
    TestDatabases.awaitDecoded(infra, DB);

    assertEquals(List.of(
        "UPDATE|{\"v\": 1, \"id\": 1, \"note\": \"one\"}|{\"v\": 10, \"id\": 1, \"note\": \"one\"}",
        "UPDATE|{\"v\": 2, \"id\": 2, \"note\": \"two\"}|{\"v\": 2, \"id\": 20, \"note\": \"two\"}",
        "DELETE|{\"v\": 3, \"id\": 3, \"note\": \"three\"}|null"), changes("whole"));
    // the key alone: nothing of an update that kept its key, the old key of one that changed it, the key of a delete
    assertEquals(List.of(
        "UPDATE|null|{\"v\": 10, \"id\": 1, \"note\": \"one\"}",
        "UPDATE|{\"id\": 2}|{\"v\": 2, \"id\": 20, \"note\": \"two\"}",
        "DELETE|{\"id\": 3}|null"), changes("keyed"));
    assertEquals(List.of("[20]", "[3]"), TestDatabases.strings(infra, DB, "SELECT key::text FROM tidemark.changelog"
        + " WHERE table_name = 'keyed' AND op <> 'INSERT' AND key::text <> '[1]' ORDER BY id"));
    // without a primary key the old row is what names the row, and it stays whole
    assertEquals(List.of(
        "UPDATE|{\"v\": 1, \"note\": \"one\"}|{\"v\": 10, \"note\": \"one\"}",
        "DELETE|{\"v\": 10, \"note\": \"one\"}|null"), changes("nokey"));
  }

  @Test
  @Order(3)
  void aChangedChoiceTakesEffectAtTheNextReconcileAndReachesTablesMadeLater() {
    // the role restarted with another choice: its first reconcile puts it on the tables
    relay.close();
    relay = ChangelogRole.start(infra, DB, NAME, Map.of(ConfigKey.DATABASE_KEY_ONLY_TABLES, "public.whole,later",
        ConfigKey.CHANGELOG_RECONCILE_SECONDS, "1"));
    assertEquals(List.of("d", "f", "f"), List.of(identity("whole"), identity("keyed"), identity("nokey")));
    assertEquals(List.of("public.keyed=full", "public.nokey=full", "public.whole=key"), beforeImages());
    sql(infra, DB, "UPDATE public.whole SET v = 11 WHERE id = 1", "UPDATE public.keyed SET v = 11 WHERE id = 1");
    TestDatabases.awaitDecoded(infra, DB);
    assertEquals("UPDATE|null|{\"v\": 11, \"id\": 1, \"note\": \"one\"}", last("whole"));
    assertEquals("UPDATE|{\"v\": 10, \"id\": 1, \"note\": \"one\"}|{\"v\": 11, \"id\": 1, \"note\": \"one\"}", last("keyed"));

    // the choice is kept in the database, so a table created later gets it from whichever reconcile publishes it
    sql(infra, DB, "DROP TABLE IF EXISTS public.later", "CREATE TABLE public.later (id int PRIMARY KEY, v int)");
    Await.that("public.later published", Duration.ofSeconds(30), () -> beforeImages().contains("public.later=key"));
    assertEquals("d", identity("later"));
  }

  private String identity(String table) {
    return TestDatabases.strings(infra, DB, "SELECT relreplident::text FROM pg_class WHERE oid = 'public." + table + "'::regclass").get(0);
  }

  /** What status reports, as table=before_images. */
  private List<String> beforeImages() {
    return TestDatabases.strings(infra, DB, "SELECT relation || '=' || before_images FROM (" + CaptureSetup.BEFORE_IMAGES_SQL + ") x"
        + " WHERE relation IN ('public.whole', 'public.keyed', 'public.nokey', 'public.later')");
  }

  private List<String> changes(String table) {
    return TestDatabases.strings(infra, DB, "SELECT op || '|' || coalesce(before::text, 'null') || '|' || coalesce(after::text, 'null')"
        + " FROM tidemark.changelog WHERE table_name = '" + table + "' AND op IN ('UPDATE', 'DELETE') ORDER BY id");
  }

  private String last(String table) {
    List<String> all = changes(table);
    return all.get(all.size() - 1);
  }
}
