package dev.tidemark.database.schema;

import dev.tidemark.database.SqlStates;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Installs Tidemark's own schema with versioned migrations (before the first that captures by
 * logical decoding, the publication and the replication slot: {@link CaptureSetup#prepare}, which
 * also refuses a PostgreSQL that cannot decode, naming each setting). Each migration runs once, in one
 * transaction with its bookkeeping row; an advisory lock lets several nodes start at once safely,
 * and running it again changes nothing.
 */
public final class Migrator {

  /** In order; a migration's version is the number after V. Only ever append. */
  static final List<String> MIGRATIONS = List.of("V1__schema_and_tokens.sql", "V2__caller_roles.sql", "V3__changelog.sql",
      "V4__idempotency.sql", "V5__caller_security.sql", "V6__token_revocation.sql", "V7__logical_decoding.sql",
      "V8__token_expiry.sql", "V9__events.sql", "V10__proposals.sql", "V11__planner_estimates.sql",
      "V12__capture_ownership.sql", "V13__planned_once.sql", "V14__exact_approvals.sql", "V15__event_consumer_bounds.sql",
      "V16__tasks.sql", "V17__before_images_by_choice.sql", "V18__changelog_relations.sql",
      "V19__unplanned_tables.sql");

  /** The first version that captures by logical decoding: the publication and the slot must exist before it runs. */
  static final int LOGICAL_DECODING = 7;

  /** Any fixed number: it only has to differ from locks other programs take. */
  private static final long LOCK_KEY = 0x7469_6465_6d61_726bL;

  private Migrator() {}

  /** @return the versions applied by this call (empty when the schema was up to date) */
  public static Future<List<Integer>> migrate(Pool pool) {
    return migrate(pool, latestVersion());
  }

  /** Applies the migrations up to version {@code upTo} (tests of an upgrade start from an older schema). */
  public static Future<List<Integer>> migrate(Pool pool, int upTo) {
    return installedVersion(pool)
        .compose(version -> version >= upTo ? Future.succeededFuture(version) : refuseWithout(pool, version))
        .compose(version -> version < LOGICAL_DECODING && upTo >= LOGICAL_DECODING ? prepareCapture(pool) : Future.succeededFuture())
        .compose(x -> migrateInTransaction(pool, upTo))
        // two first migrations of one database can still meet on the schema's creation (23505 on
        // pg_namespace, seen when two nodes start together); the one that lost runs again and then
        // finds what the other applied
        .recover(err -> SqlStates.is(err, SqlStates.UNIQUE_VIOLATION)
            ? migrateInTransaction(pool, upTo) : Future.failedFuture(err));
  }

  /** The version of Tidemark's schema in the database, 0 when it has none. */
  public static Future<Integer> installedVersion(SqlClient client) {
    return client.query("SELECT coalesce((SELECT max(version) FROM tidemark.schema_version), 0)").execute()
        .map(rows -> rows.iterator().next().getInteger(0))
        .otherwise(0);  // no schema yet
  }

  /**
   * What the login lacks to apply the migrations after {@code version}, each with the statement that grants it; empty
   * when it lacks nothing. Asked before anything is created, so that a refusal leaves the database as it was: a slot
   * made before a migration that then failed would hold the server's WAL for a capture that never runs.
   */
  public static Future<List<String>> installProblems(SqlClient client, int version) {
    return client.query(RIGHTS).execute().map(rows -> {
      Row r = rows.iterator().next();
      String login = r.getString("login");
      String db = r.getString("db");
      List<String> out = new ArrayList<>();
      if (!r.getBoolean("has_schema") && !r.getBoolean("can_create")) {
        out.add("the login " + login + " may not create schema tidemark in database " + db + ": run GRANT CREATE ON DATABASE "
            + quote(db) + " TO " + quote(login) + "; as the database's owner or a superuser");
      }
      List<String> roles = java.util.Arrays.asList(r.getArrayOfStrings("roles_to_make"));
      if (version < CALLER_ROLES && !roles.isEmpty() && !r.getBoolean("may_make_roles")) {
        out.add("the login " + login + " may not create the caller roles " + String.join(" and ", roles) + ": run as a superuser "
            + roles.stream().map(x -> "CREATE ROLE " + x + " NOLOGIN;").collect(java.util.stream.Collectors.joining(" "))
            + " (docs/security.md gives them logins), or ALTER ROLE " + quote(login) + " CREATEROLE;");
      }
      return out;
    });
  }

  /** Fails, naming every right and setting that is missing, before anything is created; else the version. */
  private static Future<Integer> refuseWithout(SqlClient client, int version) {
    Future<List<String>> capture = version >= LOGICAL_DECODING ? Future.succeededFuture(List.of())
        : CaptureSetup.slotName(client).compose(slot -> CaptureSetup.settings(client, slot)).map(CaptureSetup::problems);
    return Future.all(installProblems(client, version), capture).compose(both -> {
      List<String> problems = new ArrayList<>(both.<List<String>>resultAt(0));
      problems.addAll(both.<List<String>>resultAt(1));
      return problems.isEmpty() ? Future.succeededFuture(version)
          : Future.failedFuture(new IllegalStateException("PostgreSQL cannot take Tidemark's schema and capture yet:\n  - "
              + String.join("\n  - ", problems)));
    });
  }

  /** The version whose migration makes the caller roles tidemark_reader and tidemark_writer. */
  static final int CALLER_ROLES = 2;

  private static final String RIGHTS = """
      SELECT current_user::text AS login, current_database()::text AS db,
             has_database_privilege(current_database(), 'CREATE') AS can_create,
             EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'tidemark') AS has_schema,
             (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) AS may_make_roles,
             ARRAY(SELECT x FROM unnest(ARRAY['tidemark_reader', 'tidemark_writer']) x
                    WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = x) ORDER BY 1) AS roles_to_make""";

  static String quote(String identifier) {
    return identifier.matches("[a-z_][a-z0-9_]*") ? identifier : '"' + identifier.replace("\"", "\"\"") + '"';
  }

  /**
   * The capture's setup runs before the migration's lock (a replication slot cannot be created in
   * a transaction that has written), so two nodes that migrate at once may race on an object both
   * create: the loser finds it made (unique or duplicate object) and runs the setup once more, which
   * then has nothing left to create.
   */
  private static Future<Void> prepareCapture(Pool pool) {
    return CaptureSetup.prepare(pool).recover(err -> {
      return SqlStates.is(err, SqlStates.UNIQUE_VIOLATION, SqlStates.DUPLICATE_OBJECT, SqlStates.DUPLICATE_SCHEMA)
          ? CaptureSetup.prepare(pool) : Future.<Void>failedFuture(err);
    });
  }

  private static Future<List<Integer>> migrateInTransaction(Pool pool, int upTo) {
    return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock($1)").execute(Tuple.of(LOCK_KEY))
        // "already exists, skipping" is every run's news but the first: a node's log would print it on each start
        .compose(x -> conn.query("SET LOCAL client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS tidemark; "
            + "CREATE TABLE IF NOT EXISTS tidemark.schema_version ("
            + "version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())").execute())
        .compose(x -> conn.query("SELECT coalesce(max(version), 0) FROM tidemark.schema_version").execute())
        .compose(rows -> {
          int current = rows.iterator().next().getInteger(0);
          Future<List<Integer>> chain = Future.succeededFuture(new java.util.ArrayList<>());
          for (String file : MIGRATIONS) {
            int version = version(file);
            if (version <= current || version > upTo) {
              continue;
            }
            chain = chain.compose(applied -> conn.query(read("migrations/" + file)).execute()
                .compose(x -> conn.preparedQuery("INSERT INTO tidemark.schema_version(version, name) VALUES ($1, $2)")
                    .execute(Tuple.of(version, file)))
                .map(x -> {
                  applied.add(version);
                  return applied;
                }));
          }
          return chain;
        }));
  }

  /** The newest version this build knows. */
  public static int latestVersion() {
    return version(MIGRATIONS.get(MIGRATIONS.size() - 1));
  }

  static int version(String file) {
    return Integer.parseInt(file.substring(1, file.indexOf("__")));
  }

  public static String read(String resource) {
    String path = "/dev/tidemark/database/schema/" + resource;
    try (InputStream in = Migrator.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
