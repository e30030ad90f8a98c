package dev.tidemark.database.schema;

import dev.tidemark.config.TidemarkConfig;
import dev.tidemark.database.SqlStates;
import io.vertx.core.Future;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * The parts of capture that live in PostgreSQL outside schema {@code tidemark}: the publication of
 * the served tables and the database's logical replication slot. What the server must allow for
 * them is checked before anything is created, and each missing setting is named with how to set it.
 */
public final class CaptureSetup {

  /** The publication of the served tables, in each served database. */
  public static final String PUBLICATION = "tidemark_changes";

  /**
   * The slot's name: slots are per server, so it names the database; a hash keeps two databases
   * whose names differ only in characters a slot name cannot hold apart.
   */
  public static final String SLOT_NAME_SQL = "SELECT 'tidemark_' || left(regexp_replace(lower(current_database()), '[^a-z0-9_]', '_', 'g'), 40)"
      + " || '_' || left(md5(current_database()), 6)";

  private static final String SETTINGS = """
      SELECT current_setting('wal_level') AS wal_level,
             current_setting('max_replication_slots')::int AS max_slots,
             current_setting('max_wal_senders')::int AS max_senders,
             (SELECT count(*) FROM pg_replication_slots)::int AS slots_used,
             (SELECT count(*) FROM pg_stat_replication)::int AS senders_used,
             (SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user) AS can_replicate,
             current_user::text AS login,
             EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1) AS slot_exists,
             (SELECT active FROM pg_replication_slots WHERE slot_name = $1) AS slot_active""";

  /** Each captured table the capture cannot fully follow ({@code relation}), and why ({@code problem}). */
  public static final String PROBLEMS_SQL = """
      SELECT format('%I.%I', n.nspname, c.relname) AS relation, t.problem
        FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE t.problem IS NOT NULL ORDER BY 1""";

  /**
   * What the changelog keeps of an updated or deleted row of each published table ({@code relation}):
   * {@code full}, {@code key} or {@code index} ({@code before_images}), from the table's replica
   * identity as it is now.
   */
  public static final String BEFORE_IMAGES_SQL = """
      SELECT format('%I.%I', n.nspname, c.relname) AS relation,
             CASE c.relreplident WHEN 'f' THEN 'full' WHEN 'i' THEN 'index' ELSE 'key' END AS before_images
        FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE t.published ORDER BY 1""";

  /** The captured tables without a plan trigger (database.unplanned-tables), as schema.name. */
  public static final String UNPLANNED_SQL = """
      SELECT format('%I.%I', n.nspname, c.relname) AS relation
        FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE NOT t.planned ORDER BY 1""";

  /**
   * Reconciles capture to the served schemas, the tables whose before-images are their key alone and
   * the tables without a plan trigger.
   */
  public static final String RECONCILE_SQL = "SELECT tidemark.capture_schemas($1, $2, $3)";

  /** The arguments of {@link #RECONCILE_SQL}: database.schemas, database.key-only-tables and database.unplanned-tables. */
  public static Tuple reconcileArguments(TidemarkConfig.DatabaseConfig db) {
    return Tuple.tuple().addArrayOfString(db.schemas().toArray(new String[0])).addArrayOfString(db.keyOnlyTables().toArray(new String[0]))
        .addArrayOfString(db.unplannedTables().toArray(new String[0]));
  }

  private CaptureSetup() {}

  /** What the server reports about the settings capture needs. */
  public record Settings(String walLevel, int maxSlots, int maxSenders, int slotsUsed, int sendersUsed, boolean canReplicate,
      String login, boolean slotExists, boolean slotActive) {}

  /** Every setting that keeps capture from running, each with how to set it; empty when none does. */
  public static List<String> problems(Settings s) {
    List<String> out = new ArrayList<>();
    if (!"logical".equals(s.walLevel())) {
      out.add("wal_level is '" + s.walLevel() + "', and logical decoding needs 'logical': run ALTER SYSTEM SET wal_level = logical;"
          + " and restart PostgreSQL (on a managed service, set the parameter: rds.logical_replication = 1 on Amazon RDS,"
          + " cloudsql.logical_decoding = on on Cloud SQL)");
    }
    if (!s.slotExists() && s.slotsUsed() >= s.maxSlots()) {
      out.add("max_replication_slots is " + s.maxSlots() + " and " + s.slotsUsed() + " slot(s) exist; Tidemark needs one per served"
          + " database: run ALTER SYSTEM SET max_replication_slots = " + (s.slotsUsed() + 1 + Math.max(9, s.maxSlots()))
          + "; and restart PostgreSQL");
    }
    if (s.maxSenders() < 1 || (!s.slotActive() && s.sendersUsed() >= s.maxSenders())) {
      out.add("max_wal_senders is " + s.maxSenders() + " and " + s.sendersUsed() + " in use; the relay streams the slot over a"
          + " replication connection: run ALTER SYSTEM SET max_wal_senders = " + Math.max(10, s.sendersUsed() + 2)
          + "; and restart PostgreSQL");
    }
    if (!s.canReplicate()) {
      out.add("the login " + s.login() + " has neither REPLICATION nor superuser, and reading a replication slot needs one:"
          + " run ALTER ROLE " + s.login() + " REPLICATION; as a superuser (on Amazon RDS: GRANT rds_replication TO " + s.login() + ";)");
    }
    return out;
  }

  public static Future<String> slotName(SqlClient client) {
    return client.query(SLOT_NAME_SQL).execute().map(rows -> rows.iterator().next().getString(0));
  }

  public static Future<Settings> settings(SqlClient client, String slot) {
    return client.preparedQuery(SETTINGS).execute(Tuple.of(slot)).map(rows -> {
      Row r = rows.iterator().next();
      return new Settings(r.getString("wal_level"), r.getInteger("max_slots"), r.getInteger("max_senders"), r.getInteger("slots_used"),
          r.getInteger("senders_used"), Boolean.TRUE.equals(r.getBoolean("can_replicate")), r.getString("login"),
          r.getBoolean("slot_exists"), Boolean.TRUE.equals(r.getBoolean("slot_active")));
    });
  }

  /** Fails, naming every missing setting and how to set it, when the server cannot run capture. */
  public static Future<String> checkPrerequisites(SqlClient client) {
    return slotName(client).compose(slot -> settings(client, slot).compose(s -> {
      List<String> problems = problems(s);
      if (problems.isEmpty()) {
        return Future.succeededFuture(slot);
      }
      return Future.failedFuture(new IllegalStateException("PostgreSQL cannot run Tidemark's capture (logical decoding):\n  - "
          + String.join("\n  - ", problems)));
    }));
  }

  /**
   * Creates the publication (empty: the migration and the reconcile add the tables) and then the
   * slot, each in a transaction of its own: a slot cannot be made by a transaction that wrote, and
   * a publication made after its slot would be missing from the slot's first decoded changes.
   */
  public static Future<Void> prepare(SqlClient client) {
    return checkPrerequisites(client).compose(slot -> client.query("SELECT 1 FROM pg_publication WHERE pubname = '" + PUBLICATION + "'")
        .execute()
        .compose(rows -> rows.size() > 0 ? Future.succeededFuture()
            : client.query("CREATE PUBLICATION " + PUBLICATION + " WITH (publish = 'insert, update, delete, truncate')").execute()
                .<Void>mapEmpty().recover(CaptureSetup::ignoreDuplicate))
        .compose(x -> client.preparedQuery("SELECT 1 FROM pg_replication_slots WHERE slot_name = $1").execute(Tuple.of(slot)))
        .compose(rows -> rows.size() > 0 ? Future.succeededFuture()
            : client.preparedQuery("SELECT pg_create_logical_replication_slot($1, 'pgoutput')").execute(Tuple.of(slot))
                .<Void>mapEmpty().recover(CaptureSetup::ignoreDuplicate)));
  }

  private static Future<Void> ignoreDuplicate(Throwable err) {
    // another node created it first
    return SqlStates.is(err, SqlStates.DUPLICATE_OBJECT) ? Future.succeededFuture() : Future.failedFuture(err);
  }

  /**
   * Removes everything Tidemark put into the database: the slot (which must be idle: stop every
   * node first), the publication, the event and plan triggers, the replica identity it set (back to
   * what each table had), and schema {@code tidemark}. The caller roles are the server's, not the
   * database's, and stay. A table is altered only where Tidemark changed it, and when the login
   * could not undo a change (a plan trigger or a replica identity on a table it does not own),
   * nothing is removed and the tables are named: half an uninstall would leave triggers that call
   * functions no longer there.
   */
  public static Future<Void> uninstall(SqlClient client) {
    return client.query(UNINSTALL_CHECK).execute().compose(checked -> slotName(client)).compose(slot -> client.preparedQuery(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1").execute(Tuple.of(slot))
        .compose(x -> client.query("DROP PUBLICATION IF EXISTS " + PUBLICATION).execute())
        .compose(x -> client.query(UNINSTALL).execute())
        .mapEmpty());
  }

  /** The captured tables Tidemark changed: a plan trigger on them, or a replica identity other than they had. */
  private static final String CHANGED_TABLES = """
      SELECT n.nspname, c.relname, c.oid, t.original_identity,
             CASE WHEN t.original_identity = 'd' THEN c.relreplident <> 'd'
                  WHEN t.original_identity = 'n' THEN c.relreplident <> 'n'
                  WHEN t.original_identity LIKE 'i:%' THEN c.relreplident <> 'i' OR NOT EXISTS (
                    SELECT 1 FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
                     WHERE i.indrelid = c.oid AND i.indisreplident AND quote_ident(ic.relname) = substr(t.original_identity, 3))
                  ELSE false END AS identity_changed,
             EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = c.oid
                        AND g.tgname IN ('tidemark_capture', 'tidemark_capture_truncate')) AS has_trigger,
             pg_has_role(c.relowner, 'USAGE') AS owned
        FROM tidemark.captured_table t JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace""";

  private static final String UNINSTALL_CHECK = """
      DO $$
      DECLARE
        blocked text;
      BEGIN
        IF to_regclass('tidemark.captured_table') IS NULL THEN
          RETURN;
        END IF;
        SELECT string_agg(format('%I.%I', x.nspname, x.relname), ', ' ORDER BY x.nspname, x.relname) INTO blocked
          FROM (""" + CHANGED_TABLES + """
      ) x
         WHERE (x.identity_changed OR x.has_trigger) AND NOT x.owned;
        IF blocked IS NOT NULL THEN
          RAISE EXCEPTION 'uninstall cannot undo what Tidemark changed on tables this login does not own: %', blocked
            USING ERRCODE = '42501',
                  HINT = 'Run tidemark uninstall as their owner or as a superuser. Nothing was removed.';
        END IF;
      END
      $$""";

  private static final String UNINSTALL = """
      DO $$
      DECLARE
        r record;
      BEGIN
        DROP EVENT TRIGGER IF EXISTS tidemark_ddl_command_end;
        DROP EVENT TRIGGER IF EXISTS tidemark_sql_drop;
        IF to_regclass('tidemark.captured_table') IS NOT NULL THEN
          FOR r IN""" + "\n" + CHANGED_TABLES + """

          LOOP
            IF r.has_trigger THEN
              EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture ON %I.%I', r.nspname, r.relname);
              EXECUTE format('DROP TRIGGER IF EXISTS tidemark_capture_truncate ON %I.%I', r.nspname, r.relname);
            END IF;
            IF NOT r.identity_changed THEN
              CONTINUE;
            ELSIF r.original_identity = 'd' THEN
              EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY DEFAULT', r.nspname, r.relname);
            ELSIF r.original_identity = 'n' THEN
              EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY NOTHING', r.nspname, r.relname);
            ELSIF r.original_identity LIKE 'i:%' THEN
              EXECUTE format('ALTER TABLE %I.%I REPLICA IDENTITY USING INDEX %s', r.nspname, r.relname, substr(r.original_identity, 3));
            END IF;
          END LOOP;
        END IF;
        DROP SCHEMA IF EXISTS tidemark CASCADE;
      END
      $$""";
}
