package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import dev.tidemark.testsupport.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code tidemark migrate} gives the tables of database.key-only-tables the key alone as replica
 * identity (a named table without a primary key keeps FULL), takes the plan trigger off the tables
 * of database.unplanned-tables, names both, and a migrate without them puts full before-images and
 * the plan triggers back.
 */
@ExtendWith(InfraExtension.class)
class MigrateBeforeImagesIT {

  private static final String DB = "tidemark_before_images_cli_it";

  @Test
  void migrateSetsTheChosenReplicaIdentityAndPlanTriggersNamesTheTablesAndPutsThemBack(SharedInfra infra, @TempDir Path dir) throws Exception {
    infra.postgres().createDatabaseIfMissing(DB);
    TestDatabases.sql(infra, DB, "DROP TABLE IF EXISTS public.mb_keyed, public.mb_full, public.mb_nokey",
        "CREATE TABLE public.mb_keyed (id int PRIMARY KEY, v text)", "CREATE TABLE public.mb_full (id int PRIMARY KEY, v text)",
        "CREATE TABLE public.mb_nokey (v text)");
    String base = "database:\n  url: " + infra.postgres().url(DB) + "\n  user: " + infra.postgres().user()
        + "\n  password: " + infra.postgres().password() + "\n";
    Path keyOnly = dir.resolve("key-only.yaml");
    Files.writeString(keyOnly, base + "  key-only-tables: public.mb_keyed,mb_nokey\n  unplanned-tables: mb_full\n");
    Path full = dir.resolve("full.yaml");
    Files.writeString(full, base);
    try {
      Cli.Run migrated = Cli.run("migrate", "--config", keyOnly.toString());
      assertEquals(0, migrated.code(), migrated.out() + migrated.err());
      assertTrue(migrated.out().contains("changes keep only the key of updated and deleted rows (database.key-only-tables) on 1"
          + " table(s): public.mb_keyed"), migrated.out());
      assertEquals(List.of("mb_full=f", "mb_keyed=d", "mb_nokey=f"), identities(infra));
      assertTrue(migrated.out().contains("change tools do not change (no plan trigger, database.unplanned-tables) 1 table(s):"
          + " public.mb_full"), migrated.out());
      assertEquals(List.of("mb_keyed", "mb_nokey"), planned(infra));

      Cli.Run back = Cli.run("migrate", "--config", full.toString());
      assertEquals(0, back.code(), back.out() + back.err());
      assertFalse(back.out().contains("key-only-tables"), back.out());
      assertEquals(List.of("mb_full=f", "mb_keyed=f", "mb_nokey=f"), identities(infra));
      assertFalse(back.out().contains("unplanned-tables"), back.out());
      assertEquals(List.of("mb_full", "mb_keyed", "mb_nokey"), planned(infra));
    } finally {
      Cli.Run removed = Cli.run("uninstall", "--config", full.toString(), "--yes");
      assertEquals(0, removed.code(), removed.out() + removed.err());
    }
  }

  /** The tables that carry the plan trigger. */
  private static List<String> planned(SharedInfra infra) {
    return TestDatabases.strings(infra, DB, "SELECT DISTINCT c.relname::text FROM pg_class c JOIN pg_trigger t ON t.tgrelid = c.oid"
        + " AND t.tgname = 'tidemark_capture' WHERE c.relname IN ('mb_keyed', 'mb_full', 'mb_nokey') ORDER BY 1");
  }

  private static List<String> identities(SharedInfra infra) {
    return TestDatabases.strings(infra, DB, "SELECT relname || '=' || relreplident::text FROM pg_class"
        + " WHERE relname IN ('mb_keyed', 'mb_full', 'mb_nokey') ORDER BY relname");
  }
}
