package dev.tidemark.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tidemark.testsupport.InfraExtension;
import dev.tidemark.testsupport.SharedInfra;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** {@code tidemark migrate} refuses a caller role that could reach past its grants, naming the fix, and changes nothing. */
@ExtendWith(InfraExtension.class)
class CallerRoleCheckIT {

  private static final String DB = "tidemark_roles_it";

  @Test
  void migrateRefusesEveryRoleThatReachesPastItsGrantsNamesTheFixAndPassesOnceFixed(SharedInfra infra, @TempDir Path dir)
      throws Exception {
    infra.postgres().createDatabaseIfMissing(DB);
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), infra.postgres().user(),
        infra.postgres().password()); Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS public.it_owned");
      s.execute("DROP TABLE IF EXISTS public.it_owned_by_group");
      for (String role : new String[] {"it_bypass", "it_signal", "it_owner", "it_super", "it_repl", "it_creator", "it_login",
          "it_member", "it_bypass_group", "it_owner_group"}) {
        s.execute("DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" + role + "') THEN EXECUTE 'DROP OWNED BY "
            + role + "'; EXECUTE 'DROP ROLE " + role + "'; END IF; END $$");
      }
      s.execute("CREATE ROLE it_bypass LOGIN BYPASSRLS");
      s.execute("CREATE ROLE it_signal LOGIN");
      s.execute("GRANT pg_signal_backend TO it_signal");
      s.execute("CREATE ROLE it_owner LOGIN");
      s.execute("CREATE TABLE public.it_owned (id int PRIMARY KEY)");
      s.execute("ALTER TABLE public.it_owned ENABLE ROW LEVEL SECURITY");
      s.execute("ALTER TABLE public.it_owned OWNER TO it_owner");
      s.execute("CREATE ROLE it_super LOGIN SUPERUSER");
      s.execute("CREATE ROLE it_repl LOGIN REPLICATION");
      s.execute("CREATE ROLE it_creator LOGIN CREATEROLE");
      s.execute("CREATE ROLE it_login LOGIN");
      // what a caller role reaches through the roles it is a member of counts as its own
      s.execute("CREATE ROLE it_member LOGIN");
      s.execute("CREATE ROLE it_bypass_group NOLOGIN BYPASSRLS");
      s.execute("CREATE ROLE it_owner_group NOLOGIN");
      s.execute("GRANT it_bypass_group, it_owner_group TO it_member");
      s.execute("CREATE TABLE public.it_owned_by_group (id int PRIMARY KEY)");
      s.execute("ALTER TABLE public.it_owned_by_group ENABLE ROW LEVEL SECURITY");
      s.execute("ALTER TABLE public.it_owned_by_group OWNER TO it_owner_group");
      s.execute("GRANT " + infra.postgres().user() + " TO it_login");
    }
    Path config = dir.resolve("tidemark.yaml");
    Files.writeString(config, "database:\n  url: " + infra.postgres().url(DB) + "\n  user: " + infra.postgres().user()
        + "\n  password: " + infra.postgres().password()
        + "\n  caller-passwords: it_bypass:a,it_signal:b,it_owner:c,it_super:d,it_repl:e,it_creator:f,it_login:g,it_missing:h,it_member:i\n");

    Cli.Run refused = Cli.run("migrate", "--config", config.toString());
    assertEquals(2, refused.code(), refused.out() + refused.err());
    String err = refused.err();
    assertTrue(err.contains("ALTER ROLE it_bypass NOBYPASSRLS"), err);
    assertTrue(err.contains("REVOKE pg_signal_backend FROM it_signal"), err);
    assertTrue(err.contains("ALTER TABLE public.it_owned FORCE ROW LEVEL SECURITY"), err);
    assertTrue(err.contains("ALTER ROLE it_super NOSUPERUSER"), err);
    assertTrue(err.contains("ALTER ROLE it_repl NOREPLICATION"), err);
    assertTrue(err.contains("ALTER ROLE it_creator NOCREATEROLE"), err);
    assertTrue(err.contains("caller role it_login is, or is a member of, Tidemark's own login"), err);
    assertTrue(err.contains("caller role it_missing does not exist"), err);
    assertTrue(err.contains("caller role it_member is a member of it_bypass_group") && err.contains("REVOKE it_bypass_group FROM it_member"), err);
    assertTrue(err.contains("public.it_owned_by_group (owned by it_owner_group)"), err);
    assertTrue(err.contains("Nothing was changed"), err);
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), infra.postgres().user(),
        infra.postgres().password()); Statement s = c.createStatement()) {
      java.sql.ResultSet schema = s.executeQuery("SELECT to_regclass('tidemark.schema_version') IS NULL");
      schema.next();
      assertTrue(schema.getBoolean(1), "nothing was migrated");
      s.execute("ALTER ROLE it_bypass NOBYPASSRLS");
      s.execute("REVOKE pg_signal_backend FROM it_signal");
      s.execute("ALTER TABLE public.it_owned FORCE ROW LEVEL SECURITY");
      s.execute("ALTER ROLE it_super NOSUPERUSER");
      s.execute("ALTER ROLE it_repl NOREPLICATION");
      s.execute("ALTER ROLE it_creator NOCREATEROLE");
      s.execute("REVOKE " + infra.postgres().user() + " FROM it_login");
      s.execute("CREATE ROLE it_missing LOGIN");
      s.execute("REVOKE it_bypass_group FROM it_member");
      s.execute("ALTER TABLE public.it_owned_by_group FORCE ROW LEVEL SECURITY");
    }
    Cli.Run passed = Cli.run("migrate", "--config", config.toString());
    assertEquals(0, passed.code(), passed.out() + passed.err());
    try (Connection c = java.sql.DriverManager.getConnection(infra.postgres().jdbcUrl(DB), infra.postgres().user(),
        infra.postgres().password()); Statement s = c.createStatement()) {
      s.execute("DROP TABLE public.it_owned");
      s.execute("DROP TABLE public.it_owned_by_group");
      s.execute("DROP ROLE it_missing");
    }
  }
}
